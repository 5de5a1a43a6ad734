package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// RunnerConfig tunes every projector's subscriber.
type RunnerConfig struct {
	BatchSize    int
	PollInterval time.Duration
	// CheckpointSuffix names checkpoints apart from the live ones (the
	// rebuild uses it to build a shadow copy).
	CheckpointSuffix string
	// ListenDSN, when set, is the database the head watch listens on, on a
	// connection of its own, for the appends every process announces
	// (eventstore.ListenForAppends): an idle runner then reads the log's
	// head every 25 poll intervals instead of every one.
	ListenDSN string
}

// Runner runs projectors as handlers of one Watermill router.
type Runner struct {
	router      *message.Router
	watch       *headWatch
	projectors  []Projector
	subscribers []*Subscriber
	progress    map[string]*Progress
}

// NewRunner wires each projector to its own subscriber and handler.
func NewRunner(store eventstore.Store, db *bun.DB, logger *slog.Logger, cfg RunnerConfig, projectors ...Projector) (*Runner, error) {
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 30 * time.Second}, watermill.NewSlogLoggerWithLevelMapping(
		logger, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug},
	))
	if err != nil {
		return nil, fmt.Errorf("create projection router: %w", err)
	}
	poll := cfg.PollInterval
	if poll <= 0 {
		poll = defaultPollInterval
	}
	r := &Runner{router: router, projectors: projectors, progress: map[string]*Progress{}, watch: newHeadWatch(store, poll, cfg.ListenDSN, logger)}
	for _, p := range projectors {
		prog := newProgress()
		sub := NewSubscriber(store, db, SubscriberConfig{
			Checkpoint: p.Name() + cfg.CheckpointSuffix, Version: p.Version(), EventTypes: EventTypes(p),
			BatchSize: cfg.BatchSize, PollInterval: poll, watch: r.watch,
		}, prog, logger)
		router.AddConsumerHandler(p.Name(), p.Name(), sub, handlerFor(p))
		r.subscribers = append(r.subscribers, sub)
		r.progress[p.Name()] = prog
	}
	return r, nil
}

// Run projects until ctx ends or Close is called.
func (r *Runner) Run(ctx context.Context) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go r.watch.run(wctx)
	if err := r.router.Run(ctx); err != nil {
		return fmt.Errorf("run projections: %w", err)
	}
	return nil
}

// Running is closed once every handler is subscribed.
func (r *Runner) Running() chan struct{} { return r.router.Running() }

// Close stops the router; unfinished batches roll back.
func (r *Runner) Close() error { return r.router.Close() }

// Progress returns a projector's progress, nil when it is not run here.
func (r *Runner) Progress(name string) *Progress { return r.progress[name] }

// Projectors are the projectors this runner runs.
func (r *Runner) Projectors() []Projector { return r.projectors }

// handlerFor applies the batch a message carries (its payload) with p's
// handlers, in the batch transaction its context carries. A failure is
// recorded on the message, which carries it back with the nack.
func handlerFor(p Projector) message.NoPublishHandlerFunc {
	handlers := dispatcherFor(p)
	return func(msg *message.Message) error {
		err := func() error {
			tx, ok := TxFromContext(msg.Context())
			if !ok {
				return errors.New("the message carries no batch transaction")
			}
			events, err := unmarshalBatch(msg.Payload)
			if err != nil {
				return fmt.Errorf("%s: message %s: %w", p.Name(), msg.UUID, err)
			}
			return handlers.apply(msg.Context(), tx, p.Name(), events)
		}()
		if err != nil {
			markFailed(msg, err)
		}
		return err
	}
}

// decodeEnvelope decodes a stored event for the handlers. An event this
// build cannot decode fails its batch: it must stop the projector rather
// than be skipped.
func decodeEnvelope(e eventstore.RecordedEvent) (Envelope, error) {
	ev, err := domain.DecodeEvent(e.Type, e.Data)
	if err != nil {
		return Envelope{}, fmt.Errorf("event %s (%s at %s): %w: %w", e.ID, e.Type, e.Position, ErrUndecodable, err)
	}
	return Envelope{
		Event: ev, EventID: e.ID.String(), StreamID: e.StreamID, Revision: e.Revision,
		Position: e.Position, RecordedAt: e.RecordedAt,
	}, nil
}
