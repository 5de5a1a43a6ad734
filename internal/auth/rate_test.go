package auth

import (
	"testing"
	"time"
)

func TestARateIsReadAsRequestsPerWindowAndWrittenBackTheSameWay(t *testing.T) {
	cases := []struct {
		in     string
		want   Rate
		canon  string
		reject bool
	}{
		{in: "600/min", want: Rate{600, time.Minute}, canon: "600/min"},
		{in: "600/m", want: Rate{600, time.Minute}, canon: "600/min"},
		{in: " 10/S ", want: Rate{10, time.Second}, canon: "10/s"},
		{in: "5000/h", want: Rate{5000, time.Hour}, canon: "5000/h"},
		{in: "5000/hour", want: Rate{5000, time.Hour}, canon: "5000/h"},
		{in: "100000/day", want: Rate{100000, 24 * time.Hour}, canon: "100000/day"},
		{in: "100/30s", want: Rate{100, 30 * time.Second}, canon: "100/30s"},
		{in: "100/90s", want: Rate{100, 90 * time.Second}, canon: "100/90s"},
		{in: "1000/15min", want: Rate{1000, 15 * time.Minute}, canon: "1000/15min"},
		{in: "60/60s", want: Rate{60, time.Minute}, canon: "60/min"},
		{in: "unlimited", want: Unlimited, canon: "unlimited"},
		{in: "600", reject: true},
		{in: "0/min", reject: true},
		{in: "-1/min", reject: true},
		{in: "1000000001/s", reject: true},
		{in: "10/fortnight", reject: true},
		{in: "10/0s", reject: true},
		{in: "10/25h", reject: true},
		{in: "10/2day", reject: true},
		{in: "ten/min", reject: true},
		{in: "", reject: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseRate(c.in)
			if c.reject {
				if err == nil {
					t.Fatalf("ParseRate(%q) = %v; want an error", c.in, got)
				}
				return
			}
			if err != nil || got != c.want || got.String() != c.canon {
				t.Fatalf("ParseRate(%q) = %v (%q), %v; want %v (%q)", c.in, got, got.String(), err, c.want, c.canon)
			}
			if again, err := ParseRate(got.String()); err != nil || again != got {
				t.Fatalf("%q does not read back: %v, %v", got.String(), again, err)
			}
		})
	}
}
