// Package storetest is the contract of eventstore.Store as one test suite:
// every implementation runs Run with a constructor, so that a fake used by
// fast tests behaves like the store used in production.
//
// Behaviour that only one implementation has, such as how Postgres holds
// readers back behind a transaction that commits out of order, is tested
// next to that implementation, not here. What every store on a shared
// server owes its readers (that another session's long transaction does
// not stall them) is here, behind a Features hook.
package storetest

import (
	"testing"

	"github.com/feedsvc/feedsvc/eventstore"
)

// Features says what an implementation offers beyond the core contract; the
// suite skips the tests of what it lacks.
type Features struct {
	// Reopen returns a second Store on the storage of s, as another process
	// would open it: appends through one do not signal the other's Appended.
	// Nil when the storage is the Store value itself, as with Memory.
	Reopen func(t *testing.T, s eventstore.Store) eventstore.Store
	// HoldWrite opens, in another session, a transaction that writes
	// something other than the log at site (and so holds a transaction id
	// the server's other transactions see running), and returns the func
	// that ends it, which fails if the transaction did not stay open. Nil
	// when the store has no such transactions, as with Memory.
	HoldWrite func(t *testing.T, s eventstore.Store, site HoldSite) (release func() error)
}

// Run runs the contract, each test on a fresh store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) eventstore.Store, features Features) {
	tests := []struct {
		name string
		run  func(t *testing.T, s eventstore.Store)
	}{
		{"AppendToStreamChecksTheExpectedRevision", appendToStreamChecksTheExpectedRevision},
		{"AppendingNoEventsReportsTheStreamWithoutWriting", appendingNoEventsReportsTheStreamWithoutWriting},
		{"ConcurrentExactAppendsLetExactlyOneWin", concurrentExactAppendsLetExactlyOneWin},
		{"ConcurrentAnyAppendsToOneHotStreamAllSucceed", concurrentAnyAppendsToOneHotStreamAllSucceed},
		{"AnyAppendsRetryWhenExactAppendsTakeTheirRevision", anyAppendsRetryWhenExactAppendsTakeTheirRevision},
		{"AppendingTheSameEventsAgainIsIdempotent", appendingTheSameEventsAgainIsIdempotent},
		{"ReusingEventIDsOutsideTheSameAppendIsAnError", reusingEventIDsOutsideTheSameAppendIsAnError},
		{"AppendRejectsDataThatIsNotJSON", appendRejectsDataThatIsNotJSON},
		{"AppendToStreamsStoresEveryPartInOneCommitInOrder", appendToStreamsStoresEveryPartInOneCommitInOrder},
		{"AppendToStreamsWritesNothingWhenAnExpectationFails", appendToStreamsWritesNothingWhenAnExpectationFails},
		{"AppendingTheSameMultiStreamAppendAgainIsIdempotent", appendingTheSameMultiStreamAppendAgainIsIdempotent},
		{"AppendToStreamsRefusesWhatIsNotOneAppend", appendToStreamsRefusesWhatIsNotOneAppend},
		{"ConcurrentMultiStreamAppendsOnOneStreamLetExactlyOneWin", concurrentMultiStreamAppendsOnOneStreamLetExactlyOneWin},
		{"ConcurrentMultiStreamAnyAppendsAllSucceed", concurrentMultiStreamAnyAppendsAllSucceed},
		{"AppendedSignalsListenersOfAnyPartOfAMultiStreamAppend", appendedSignalsListenersOfAnyPartOfAMultiStreamAppend},
		{"AnEndedContextFailsEveryCallWithoutWriting", anEndedContextFailsEveryCallWithoutWriting},
		{"ReadStreamReturnsEventsInRevisionOrder", readStreamReturnsEventsInRevisionOrder},
		{"ReadStreamOfAStreamWithoutEventsIsNotFound", readStreamOfAStreamWithoutEventsIsNotFound},
		{"ReadAllReturnsTheLogInOrderAndPages", readAllReturnsTheLogInOrderAndPages},
		{"ReadAllOfTypesReturnsThoseTypesAndHowFarItRead", readAllOfTypesReturnsThoseTypesAndHowFarItRead},
		{"AppendedSignalsListenersAfterEachAppend", appendedSignalsListenersAfterEachAppend},
		{"AppendedSignalsOnlyListenersOfTheAppendedTypes", appendedSignalsOnlyListenersOfTheAppendedTypes},
		{"SubscriptionDeliversEveryConcurrentAppendOnceAndInOrder", subscriptionDeliversEveryConcurrentAppendOnceAndInOrder},
		{"SubscriptionResumesAfterAGivenPosition", subscriptionResumesAfterAGivenPosition},
		{"SubscriptionEndsWithCloseOrItsContext", subscriptionEndsWithCloseOrItsContext},
		{"AWritingTransactionInAnotherDatabaseHoldsNoReaderBack", func(t *testing.T, s eventstore.Store) {
			aHeldWritingTransactionHoldsNoReaderBack(t, s, AnotherDatabase, features.HoldWrite)
		}},
		{"AWritingTransactionThatDoesNotAppendHoldsNoReaderBack", func(t *testing.T, s eventstore.Store) {
			aHeldWritingTransactionHoldsNoReaderBack(t, s, ThisDatabase, features.HoldWrite)
		}},
		{"SubscriptionFindsAppendsThroughAnotherStoreOnTheSameStorage", func(t *testing.T, s eventstore.Store) {
			subscriptionFindsAppendsThroughAnotherStore(t, s, features.Reopen)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newStore(t)) })
	}
}
