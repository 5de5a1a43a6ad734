package eventstore_test

import (
	"testing"

	"github.com/feedsvc/feedsvc/eventstore"
	"github.com/feedsvc/feedsvc/eventstore/storetest"
)

func TestMemoryStoreMeetsTheContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) eventstore.Store { return eventstore.NewMemory() }, storetest.Features{})
}
