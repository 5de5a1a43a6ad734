package shape

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

func TestTheHandWrittenFormattersWriteWhatTheLibrariesWould(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for range 10000 {
		at := time.Unix(r.Int64N(300_000_000_000)-62_000_000_000, r.Int64N(1e9)).In(berlin)
		if got, want := string(appendTimestamp(nil, at)), at.UTC().Format(timestampLayout); got != want {
			t.Fatalf("timestamp of %v: %s, want %s", at, got, want)
		}
	}
	for _, s := range []string{"scheduled", "site", `a "quoted" \ word`, "<b>&", "tab\there", "é", ""} {
		want, _ := json.Marshal(s)
		if got := string(appendString(nil, s)); got != string(want) {
			t.Fatalf("string %q written as %s, want %s", s, got, want)
		}
	}
}
