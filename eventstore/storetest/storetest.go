// Package storetest is the contract of eventstore.Store as one test suite:
// every implementation runs Run with a constructor, so that a fake used by
// fast tests behaves like the store used in production.
//
// Behaviour that only one implementation has, such as how Postgres holds
// readers back behind a transaction that commits out of order, is tested
// next to that implementation, not here.
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
		{"SubscriptionFindsAppendsThroughAnotherStoreOnTheSameStorage", func(t *testing.T, s eventstore.Store) {
			subscriptionFindsAppendsThroughAnotherStore(t, s, features.Reopen)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newStore(t)) })
	}
}
