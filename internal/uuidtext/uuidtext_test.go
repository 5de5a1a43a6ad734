package uuidtext

import (
	"testing"

	"github.com/google/uuid"
)

func TestAppendWritesWhatStringWould(t *testing.T) {
	for range 10000 {
		id := uuid.New()
		if got := string(Append([]byte("x"), id)); got != "x"+id.String() {
			t.Fatalf("uuid %s written as %s", id, got)
		}
	}
}
