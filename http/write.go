package http

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/feedsvc/feedsvc/commands"
	"github.com/feedsvc/feedsvc/http/envelope"
	"github.com/feedsvc/feedsvc/http/transport"
)

// The writes of the API, each one sequence: the command runs in the
// request's idempotency scope, and the answer is what it decided, given
// once every later read reflects it (commands.Visible, D6).

// command is a command of the handler, as a method expression:
// (*commands.Handler).UpdateFeed.
type command[C, T any] func(h *commands.Handler, ctx context.Context, cmd C) (T, commands.Result, error)

// write runs cmd as the request's and returns what it decided once it is
// visible.
func write[C, T any](c *fiber.Ctx, h *handlers, run command[C, T], cmd C) (T, error) {
	cmds := h.Commands.Idempotent(transport.IdempotencyScope(c))
	return commands.Visible(c.UserContext(), h.Waiter, func(ctx context.Context) (T, commands.Result, error) {
		return run(cmds, ctx, cmd)
	})
}

// writeDone is write for commands that answer nothing but success.
func writeDone[C any](c *fiber.Ctx, h *handlers, run func(h *commands.Handler, ctx context.Context, cmd C) (commands.Result, error), cmd C) error {
	_, err := write(c, h, func(h *commands.Handler, ctx context.Context, cmd C) (struct{}, commands.Result, error) {
		res, err := run(h, ctx, cmd)
		return struct{}{}, res, err
	}, cmd)
	return err
}

// create is write for a command that makes a resource, which id names.
// When the change was stored but its read models lag
// (commands.ErrLagging), the answer names the resource and its id: the
// client can fetch it later instead of creating it again.
func create[C, T any](c *fiber.Ctx, h *handlers, resource string, id func(T) uuid.UUID, run command[C, T], cmd C) (T, error) {
	out, err := write(c, h, run, cmd)
	if errors.Is(err, commands.ErrLagging) {
		return out, envelope.Naming(err, resource, id(out).String())
	}
	return out, err
}
