package http

import (
	"errors"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/http/envelope"
)

// stored is err, naming what a create stored when its read models lag
// (commands.ErrLagging): the client can fetch it later instead of creating
// it again.
func stored(err error, resource, id string) error {
	if !errors.Is(err, commands.ErrLagging) {
		return err
	}
	return envelope.Naming(err, resource, id)
}
