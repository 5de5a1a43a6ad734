package eventstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
)

// sealKeyOf is the store's seal key.
func sealKeyOf(t *testing.T, s *eventstore.Postgres) eventstore.SealKey {
	t.Helper()
	k, err := s.SealKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// trailerSeal is the seal member of an export's trailer line, as written.
func trailerSeal(t *testing.T, trailer []byte) json.RawMessage {
	t.Helper()
	var line struct {
		End map[string]json.RawMessage `json:"feedsvcExportEnd"`
	}
	if err := json.Unmarshal(trailer, &line); err != nil || line.End["seal"] == nil {
		t.Fatalf("the trailer %s has no seal (%v)", trailer, err)
	}
	return line.End["seal"]
}

// withSeal is a file made by signed (checksum computed again) carrying the
// seal of another file's trailer: what an editor of an export can make
// without the key.
func withSeal(t *testing.T, file []byte, seal json.RawMessage) []byte {
	t.Helper()
	body, tail, _ := bytes.Cut(bytes.TrimSuffix(file, []byte("\n")), []byte(`{"feedsvcExportEnd":`))
	tail = bytes.TrimSuffix(tail, []byte("}}"))
	return slices.Concat(body, []byte(`{"feedsvcExportEnd":`), tail, []byte(`,"seal":`), seal, []byte("}}\n"))
}

func TestAnExportIsSealedWithTheInstallationsKeyAndAnImportChecksTheSeal(t *testing.T) {
	ctx := context.Background()
	src, _, _ := newStore(t)
	seedLog(t, src)
	lines, whole := exportAll(t, src, eventstore.ExportFilter{})
	key := sealKeyOf(t, src)
	all := bytes.SplitAfter(whole, []byte("\n"))
	head, events, tail := all[0], all[1:len(all)-2], all[len(all)-2]
	if got := trailerSeal(t, tail); !strings.Contains(string(got), `"key":"`+key.ID()+`"`) || !strings.Contains(string(got), `"alg":"HMAC-SHA256"`) {
		t.Fatalf("the seal %s does not name the installation's key %s", got, key.ID())
	}
	if strings.Contains(string(whole), key.Hex()) {
		t.Fatal("the export holds the seal key itself")
	}
	// A feed's last event removed: its stream has no gap, and the
	// checksum and count are computed again, as a careful editor would.
	last := slices.IndexFunc(events, func(l []byte) bool {
		return bytes.Contains(l, []byte(`"stream":"newsfeed-a"`)) && bytes.Contains(l, []byte(`"revision":2`))
	})
	if last < 0 {
		t.Fatal("no third revision of newsfeed-a to remove")
	}
	removed := signed(t, head, slices.Concat(events[:last], events[last+1:])...)
	other, err := eventstore.ParseSealKey(strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name string
		file []byte
		opts eventstore.ImportOptions
		want error
		says string
	}{
		{"an event removed, the checksum computed again and the seal kept", withSeal(t, removed, trailerSeal(t, tail)),
			eventstore.ImportOptions{SealKey: key}, eventstore.ErrSealMismatch, "changed after its export"},
		{"the same, imported with --unverified", withSeal(t, removed, trailerSeal(t, tail)),
			eventstore.ImportOptions{SealKey: key, Unverified: true}, eventstore.ErrSealMismatch, "changed after its export"},
		{"an event removed, the checksum computed again and the seal dropped", removed,
			eventstore.ImportOptions{SealKey: key}, eventstore.ErrNotSealed, "--unverified"},
		{"the whole file with another installation's key", whole,
			eventstore.ImportOptions{SealKey: other}, eventstore.ErrSealMismatch, "sealed with seal key " + key.ID()},
		{"the whole file with another key and --unverified", whole,
			eventstore.ImportOptions{SealKey: other, Unverified: true}, eventstore.ErrSealMismatch, key.ID()},
		{"the whole file without its key", whole, eventstore.ImportOptions{}, eventstore.ErrSealNotChecked, "--seal-key-file"},
	}
	for _, c := range refused {
		t.Run(c.name+" is refused", func(t *testing.T) {
			dst, db, _ := newStore(t)
			_, err := dst.Import(ctx, bytes.NewReader(c.file), c.opts)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("the import answered %v, want %v saying %q", err, c.want, c.says)
			}
			var n int
			if err := db.Pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM event_store)").Scan(&n); err != nil || n != 0 {
				t.Fatalf("the refused import left %d rows (%v)", n, err)
			}
		})
	}

	t.Run("the whole file with the installation's key imports, and the new store seals with that key", func(t *testing.T) {
		dst, _, _ := newStore(t)
		got, err := dst.Import(ctx, bytes.NewReader(whole), eventstore.ImportOptions{SealKey: key})
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		if got.Seal != (eventstore.SealCheck{Sealed: true, Key: key.ID(), Verified: true}) {
			t.Fatalf("seal check %+v", got.Seal)
		}
		storetest.ReadAllVisible(t, dst, eventstore.Start, len(lines))
		if k := sealKeyOf(t, dst); k.Hex() != key.Hex() {
			t.Fatalf("the moved installation seals with %s, want the key it was moved with, %s", k.ID(), key.ID())
		}
		// Its next export imports with the same key.
		_, again := exportAll(t, dst, eventstore.ExportFilter{})
		third, _, _ := newStore(t)
		if _, err := third.Import(ctx, bytes.NewReader(again), eventstore.ImportOptions{SealKey: key}); err != nil {
			t.Fatalf("an export of the moved installation: %v", err)
		}
	})
	t.Run("without the key, --unverified imports it and says the seal was not checked", func(t *testing.T) {
		dst, _, _ := newStore(t)
		got, err := dst.Import(ctx, bytes.NewReader(whole), eventstore.ImportOptions{Unverified: true})
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		if got.Seal != (eventstore.SealCheck{Sealed: true, Key: key.ID()}) {
			t.Fatalf("seal check %+v, want sealed and not verified", got.Seal)
		}
		if k := sealKeyOf(t, dst); k.Hex() == key.Hex() {
			t.Fatal("an unchecked import took the file's key")
		}
	})
}

func TestAStoreChecksItsOwnSealWithoutBeingGivenTheKey(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t)
	_, empty := exportAll(t, s, eventstore.ExportFilter{}) // makes the store's key
	got, err := s.Import(ctx, bytes.NewReader(empty), eventstore.ImportOptions{})
	if err != nil || !got.Seal.Verified {
		t.Fatalf("import of the store's own export: %+v, %v", got.Seal, err)
	}
}

func TestARotatedKeySealsWhatFollowsAndTheOldKeyStillChecksWhatCameBefore(t *testing.T) {
	ctx := context.Background()
	src, _, _ := newStore(t)
	seedLog(t, src)
	_, before := exportAll(t, src, eventstore.ExportFilter{})
	old, fresh, err := src.RotateSealKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if old.Hex() != sealKeyOf(t, src).Hex() && fresh.Hex() != sealKeyOf(t, src).Hex() || old.Hex() == fresh.Hex() {
		t.Fatalf("rotation gave old %s, new %s; the store holds %s", old.ID(), fresh.ID(), sealKeyOf(t, src).ID())
	}
	_, after := exportAll(t, src, eventstore.ExportFilter{})
	for _, c := range []struct {
		name string
		file []byte
		key  eventstore.SealKey
		want error
	}{
		{"an export before, with the old key", before, old, nil},
		{"an export before, with the new key", before, fresh, eventstore.ErrSealMismatch},
		{"an export after, with the new key", after, fresh, nil},
		{"an export after, with the old key", after, old, eventstore.ErrSealMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst, _, _ := newStore(t)
			if _, err := dst.Import(ctx, bytes.NewReader(c.file), eventstore.ImportOptions{SealKey: c.key}); !errors.Is(err, c.want) {
				t.Fatalf("import answered %v, want %v", err, c.want)
			}
		})
	}
}

func TestASealKeyReadsAsPrintedAndPrintsNoSecretByMistake(t *testing.T) {
	s, _, _ := newStore(t)
	k := sealKeyOf(t, s)
	again, err := eventstore.ParseSealKey(k.Hex() + "\n")
	if err != nil || again.Hex() != k.Hex() {
		t.Fatalf("the printed key reads back as %s (%v)", again.ID(), err)
	}
	if strings.Contains(k.String(), k.Hex()) {
		t.Fatal("String shows the secret")
	}
	for _, bad := range []string{"", "abc", strings.Repeat("z", 64), strings.Repeat("a", 62)} {
		if _, err := eventstore.ParseSealKey(bad); err == nil {
			t.Errorf("%q read as a key", bad)
		}
	}
}
