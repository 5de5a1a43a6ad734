package database

import (
	"strings"
	"testing"
)

func TestABudgetIsSplitAmongThePoolsTheRolesNeedAndNeverExceeded(t *testing.T) {
	cases := []struct {
		name               string
		total              int
		webhooks, rebuilds bool
		crawler            bool
		want               Budget
		err                string
	}{
		{name: "the default with every role", total: 0, webhooks: true, rebuilds: true, crawler: true,
			want: Budget{Total: 20, Main: 9, Sender: 5, Listener: 1, Watch: 1, CrawlWatch: 1, Rebuild: 3}},
		{name: "an API process alone keeps everything for the main pool", total: 8,
			want: Budget{Total: 8, Main: 8}},
		{name: "a webhooks process", total: 10, webhooks: true,
			want: Budget{Total: 10, Main: 5, Sender: 3, Listener: 1, Watch: 1}},
		{name: "a crawler process keeps one connection for its listener", total: 8, crawler: true,
			want: Budget{Total: 8, Main: 7, CrawlWatch: 1}},
		{name: "too small a budget for the roles is refused", total: 6, webhooks: true, rebuilds: true,
			err: "needs at least 12"},
		{name: "too small a budget counts the crawler's listener", total: 6, webhooks: true, rebuilds: true, crawler: true,
			err: "needs at least 13"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SplitBudget(c.total, c.webhooks, c.rebuilds, c.crawler)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v; want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("split %+v; want %+v", got, c.want)
			}
			if sum := got.Main + got.Sender + got.Listener + got.Watch + got.CrawlWatch + got.Rebuild; sum != got.Total {
				t.Fatalf("the pools add up to %d; want the budget, %d", sum, got.Total)
			}
		})
	}
}

func TestAPoolURLCarriesItsSizeAndNameButALoneConnectionSendsNeither(t *testing.T) {
	dsn, err := WithPool("postgres://postgres@127.0.0.1:5432/x?sslmode=disable", 7, AppName("host-1", "main"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dsn, "pool_max_conns=7") || !strings.Contains(dsn, "application_name=feedsvc%3Ahost-1%3Amain") {
		t.Fatalf("pool url %s lacks its size or its name", dsn)
	}
	if lone := connDSN(dsn); strings.Contains(lone, "pool_") || !strings.Contains(lone, "application_name") {
		t.Fatalf("single-connection url %s", lone)
	}
	if n := AppName(strings.Repeat("h", 80), "webhook-listener"); len(n) > 63 {
		t.Fatalf("application_name %q is longer than Postgres keeps", n)
	}
}
