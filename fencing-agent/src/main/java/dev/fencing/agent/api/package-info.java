/**
 * The agent's local API: {@code fencing.v1.Fencing} on a Unix domain socket for Cilium and other consumers on the
 * node.
 *
 * <p>{@link dev.fencing.agent.api.EventHub} holds the member view and fans its changes out;
 * {@link dev.fencing.agent.api.LocalApiServer} serves it with grpc-java (Netty, epoll) on
 * {@code /var/run/fencing-agent.sock} (mode 0660).
 *
 * <h2>No event is lost between GetAll and StreamEvents</h2>
 * A consumer that needs a gap-free view does not combine GetAll with a later StreamEvents: it calls StreamEvents
 * only. The stream opens with one JOIN per current member (sourceName {@code "snapshot"}), then the live JOIN/LEFT
 * events in the order the agent decided them. The snapshot is taken under the same lock as the subscriber's
 * registration and as every publish, so each change is either in the snapshot or in the live part of the stream,
 * never in both and never in neither. Replaying the stream (JOIN = put, LEFT = remove) gives exactly the agent's
 * membership. GetAll is a point-in-time answer for tools and the CLI.
 *
 * <h2>A slow consumer never slows the agent</h2>
 * Each subscriber has a bounded queue (its snapshot plus {@code perSubscriberBuffer} live events). Publishing only
 * ever offers to the queues; events leave a queue only while gRPC flow control says the client is ready. When a
 * queue is full the subscriber is removed and its stream ends with {@code RESOURCE_EXHAUSTED}; the consumer should
 * call StreamEvents again and rebuild its view from the new snapshot. The publisher and the other subscribers are
 * not affected. On shutdown every open stream ends with {@code UNAVAILABLE}.
 *
 * <h2>Socket file</h2>
 * The parent directory is created; a socket file left by a dead agent (nobody accepts connections on it) is
 * replaced; a regular file, or a socket a live process answers on, makes start fail with an explanation. The file is
 * removed on close.
 *
 * <h2>Metrics</h2>
 * {@code fencing_event_subscribers} (gauge), {@code fencing_events_published_total},
 * {@code fencing_event_subscribers_dropped_total}.
 */
package dev.fencing.agent.api;
