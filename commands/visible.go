package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/feedsvc/feedsvc/eventstore"
)

// Waiter waits until the read models that read the given event types have
// passed a position in the log. It returns an error wrapping
// context.DeadlineExceeded when its own bound passes first.
type Waiter interface {
	Wait(ctx context.Context, pos eventstore.Position, eventTypes []string) error
}

// Visible runs a command and returns its answer once every later read
// reflects what it stored (D6), including stored events it relied on
// without appending (see Result). It is the one write sequence of the API:
// the answer is what the command decided, never a read that a concurrent
// write could already have changed.
func Visible[T any](ctx context.Context, w Waiter, run func(context.Context) (T, Result, error)) (T, error) {
	out, res, err := run(ctx)
	if err != nil {
		return out, err
	}
	if err := waitFor(ctx, w, res); err != nil {
		return out, err
	}
	return out, nil
}

func waitFor(ctx context.Context, w Waiter, res Result) error {
	wait := func(pos eventstore.Position, types []string) error {
		if len(types) == 0 {
			return nil
		}
		err := w.Wait(ctx, pos, types)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("%w: %w", ErrLagging, err)
		}
		return err
	}
	if err := wait(res.Position, res.EventTypes); err != nil {
		return err
	}
	return wait(res.SeenPosition, res.SeenEventTypes)
}
