package domain_test

import (
	"testing"
	"time"

	"github.com/feedsvc/feedsvc/domain"
)

func TestAnAttachmentAcceptsFromTheBackfillWindowButNothingFromWhileItWasDisabled(t *testing.T) {
	attached := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	window := attached.Add(-domain.BackfillWindow)
	tests := []struct {
		name                  string
		sourceEnabled, feedOn time.Time
		want                  time.Time
	}{
		{"never disabled, it takes the 14 days before it was attached", time.Time{}, time.Time{}, window},
		{"re-enabling the source moves it to that moment", attached.Add(time.Hour), time.Time{}, attached.Add(time.Hour)},
		{"re-enabling the feed moves it to that moment", time.Time{}, attached.Add(2 * time.Hour), attached.Add(2 * time.Hour)},
		{"the later of the two re-enables counts", attached.Add(3 * time.Hour), attached.Add(2 * time.Hour), attached.Add(3 * time.Hour)},
		{"a re-enable dated before the window changes nothing", window.Add(-time.Hour), time.Time{}, window},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.AcceptingSince(attached, tt.sourceEnabled, tt.feedOn); !got.Equal(tt.want) {
				t.Errorf("AcceptingSince = %s, want %s", got, tt.want)
			}
		})
	}
}
