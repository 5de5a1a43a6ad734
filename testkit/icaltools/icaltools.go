// Package icaltools runs calendar readers that are not ours on what a test
// made: Debian's python3-icalendar with python3-recurring-ical-events,
// and khal (`apt-get install -y python3-icalendar
// python3-recurring-ical-events khal`; .ci/run installs them). A test
// that needs one skips, saying what to install, when it is missing, unless
// FEEDSVC_REQUIRE_ICAL_TOOLS=1 (CI) makes that a failure. It imports only
// the standard library, so the tests of every floor may use it.
package icaltools

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// python is Debian's interpreter, whose dist-packages hold the modules;
// a python3 earlier on PATH (pyenv, a virtualenv) does not see them.
const python = "/usr/bin/python3"

const install = "apt-get install -y python3-icalendar python3-recurring-ical-events khal"

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("FEEDSVC_REQUIRE_ICAL_TOOLS") == "1" {
		t.Fatalf("%s is missing (FEEDSVC_REQUIRE_ICAL_TOOLS=1): %s", what, install)
	}
	t.Skipf("%s is missing; to run this test: %s", what, install)
}

// Python runs script with Debian's python3, the calendar at ics as its
// first argument, and returns its standard output. script may import
// icalendar and recurring_ical_events.
func Python(t testing.TB, script string, ics []byte) []byte {
	t.Helper()
	if err := exec.Command(python, "-c", "import icalendar, recurring_ical_events").Run(); err != nil {
		missing(t, "python3-icalendar with python3-recurring-ical-events")
	}
	path := writeICS(t, ics)
	cmd := exec.Command(python, "-c", script, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 icalendar: %v\n%s\nthe calendar:\n%s", err, stderr.Bytes(), ics)
	}
	return out
}

// Khal prints the events of ics as khal's printics does with format
// (khal's {title}, {location}, {organizer}, {start}, ... fields), one
// line per event after khal's count line, in UTC.
func Khal(t testing.TB, ics []byte, format string) []byte {
	t.Helper()
	bin, err := exec.LookPath("khal")
	if err != nil {
		missing(t, "khal")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	if err := os.MkdirAll(filepath.Join(dir, "cal"), 0o755); err != nil {
		t.Fatal(err)
	}
	// khal wants a configuration with a calendar even to print a file.
	err = os.WriteFile(config, []byte("[calendars]\n[[feed]]\npath = "+filepath.Join(dir, "cal")+"\n"+
		"[locale]\nlocal_timezone = UTC\ndefault_timezone = UTC\ntimeformat = %H:%M\ndateformat = %Y-%m-%d\n"+
		"longdateformat = %Y-%m-%d\ndatetimeformat = %Y-%m-%d %H:%M\nlongdatetimeformat = %Y-%m-%d %H:%M\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", config, "printics", "--format", format, writeICS(t, ics))
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("khal printics: %v\n%s\nthe calendar:\n%s", err, stderr.Bytes(), ics)
	}
	return out
}

func writeICS(t testing.TB, ics []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "calendar.ics")
	if err := os.WriteFile(path, ics, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
