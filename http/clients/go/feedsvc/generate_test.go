package feedsvc_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
	"go.yaml.in/yaml/v3"

	"github.com/feedsvc/feedsvc/http/openapi"
)

// The client is oapi-codegen's output for the service's document with the
// checked-in configuration, unedited: regenerating it changes nothing.
// FEEDSVC_UPDATE_CLIENT=1 writes it instead.
func TestTheClientIsOapiCodegensOutputForTheServedDocument(t *testing.T) {
	raw, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		codegen.Configuration `yaml:",inline"`
		Output                string `yaml:"output"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatalf("kin-openapi (oapi-codegen's loader) refuses the document: %v", err)
	}
	code, err := codegen.Generate(spec, cfg.Configuration.UpdateDefaults())
	if err != nil {
		t.Fatalf("oapi-codegen: %v", err)
	}
	if os.Getenv("FEEDSVC_UPDATE_CLIENT") != "" {
		if err := os.WriteFile(cfg.Output, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, []byte(code)) {
		t.Fatalf("%s is not oapi-codegen's output for the document: regenerate it with FEEDSVC_UPDATE_CLIENT=1 go test ./go/feedsvc/ in http/clients (make client)", cfg.Output)
	}
}
