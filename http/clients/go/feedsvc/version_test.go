package feedsvc_test

import (
	"encoding/json"
	"testing"

	"github.com/feedsvc/feedsvc/http/clients/go/feedsvc"
	"github.com/feedsvc/feedsvc/http/openapi"
)

// The client says which document it speaks: Version is the served
// document's info.version (regenerate the client and move Version with
// it, `make client`).
func TestTheClientsVersionIsTheDocuments(t *testing.T) {
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Version == "" || feedsvc.Version != doc.Info.Version {
		t.Fatalf("feedsvc.Version is %q, the document's info.version %q", feedsvc.Version, doc.Info.Version)
	}
}
