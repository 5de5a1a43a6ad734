package insights_test

import (
	"context"
	"strings"
	"testing"

	"github.com/feedsvc/feedsvc/projections"
	"github.com/feedsvc/feedsvc/readmodel/insights"
	"github.com/feedsvc/feedsvc/readmodel/negativesources"
	"github.com/feedsvc/feedsvc/testkit/projectortest"
	"github.com/feedsvc/feedsvc/testkit/servicetest"
)

func TestInsightsRebuiltFromHistoryEqualTheLiveOnes(t *testing.T) {
	h := servicetest.Start(t)
	servicetest.WriteFeedbackHistory(h, 3)
	for _, p := range []projections.Projector{insights.Projector{}, negativesources.Projector{}} {
		t.Run(p.Name(), func(t *testing.T) {
			live := projectortest.Dump(t, h.Service.DB.Bun, p)
			if strings.Contains(live, " 0 rows") {
				t.Fatalf("the live read model is too empty to compare:\n%s", live)
			}
			if err := projections.Rebuild(context.Background(), h.DSN, h.Service.DB, h.Service.Store, p, servicetest.Logger()); err != nil {
				t.Fatalf("rebuild %s: %v", p.Name(), err)
			}
			if rebuilt := projectortest.Dump(t, h.Service.DB.Bun, p); rebuilt != live {
				t.Fatalf("%s rebuilt from the log differs from the live one:\nlive:\n%s\nrebuilt:\n%s", p.Name(), live, rebuilt)
			}
		})
	}
}
