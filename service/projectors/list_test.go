package projectors_test

import (
	"go/types"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/feedsvc/feedsvc/service/projectors"
)

const module = "github.com/feedsvc/feedsvc"

// unlisted are the types that implement projections.Projector and are
// rightly not in the list, each with why: a projector its owner runs
// itself, or a helper that only looks like one.
var unlisted = map[string]string{
	module + "/webhook.dispatcher": "the webhook service's (webhook.Service.Dispatcher), which service.New runs when webhooks are on",
}

// A projector left out of the list never runs: its read model stays empty
// and nothing says why. The module is type-checked (from the build's
// export data) for every named type that implements projections.Projector,
// on its value or its pointer, outside tests; each must be in All or in
// unlisted, with why, and All must hold nothing else.
func TestEveryProjectorTheModuleDeclaresIsListed(t *testing.T) {
	found := declaredProjectors(t)
	listed := map[string]bool{}
	for _, p := range projectors.All() {
		listed[typeName(reflect.TypeOf(p))] = true
	}
	for _, name := range found {
		if listed[name] {
			continue
		}
		if _, ok := unlisted[name]; !ok {
			t.Errorf("%s implements projections.Projector but is not in projectors.All: add it there (or, if it rightly is not, to unlisted here, saying why)", name)
		}
	}
	for name := range listed {
		if !slices.Contains(found, name) {
			t.Errorf("projectors.All lists %s, which the scan did not find: the scan is broken", name)
		}
	}
	for name, why := range unlisted {
		if !slices.Contains(found, name) {
			t.Errorf("unlisted names %s (%s), which is no projector any more", name, why)
		}
	}
	if len(found) < len(listed) {
		t.Fatalf("the scan found %d projectors for %d listed", len(found), len(listed))
	}
}

// declaredProjectors type-checks the module's packages and returns, as
// "import path.Name", every named type that implements
// projections.Projector.
func declaredProjectors(t *testing.T) []string {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports}, module+"/...")
	if err != nil {
		t.Fatalf("load the module's packages: %v", err)
	}
	var found []string
	for _, pkg := range pkgs {
		if len(pkg.Errors) > 0 {
			t.Fatalf("load %s: %v", pkg.PkgPath, pkg.Errors)
		}
		iface := projectorInterface(pkg.Types)
		if iface == nil {
			continue // neither the engine nor one of its importers: no projector here
		}
		scope := pkg.Types.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			typ := tn.Type()
			if types.IsInterface(typ) {
				continue
			}
			if types.Implements(typ, iface) || types.Implements(types.NewPointer(typ), iface) {
				found = append(found, pkg.PkgPath+"."+name)
			}
		}
	}
	slices.Sort(found)
	return found
}

// projectorInterface is projections.Projector as pkg sees it, nil when pkg
// neither is the projection engine nor imports it.
func projectorInterface(pkg *types.Package) *types.Interface {
	engine := pkg
	if pkg.Path() != module+"/projections" {
		i := slices.IndexFunc(pkg.Imports(), func(p *types.Package) bool { return p.Path() == module+"/projections" })
		if i < 0 {
			return nil
		}
		engine = pkg.Imports()[i]
	}
	obj := engine.Scope().Lookup("Projector")
	if obj == nil {
		return nil
	}
	iface, _ := obj.Type().Underlying().(*types.Interface)
	return iface
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() + "." + t.Name()
}

// A hand-kept list can name a projector twice; two subscribers would then
// share one checkpoint.
func TestTheListNamesEachProjectorOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range projectors.All() {
		if seen[p.Name()] {
			t.Errorf("projector %s is listed twice", p.Name())
		}
		seen[p.Name()] = true
	}
}
