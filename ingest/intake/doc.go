// Package intake holds the intakes of the service's feed kinds: what facts
// each kind's feeds take from the sources attached to them, and the
// command that turns one into an item. The crawler (package ingest)
// records what every document holds whatever feeds exist and asks these
// intakes, registered by kind when the worker is built
// (service), which attachment takes what. A new kind of feed is
// a new file here, its commands and read model, and its line in the
// registration; nothing in package ingest.
package intake
