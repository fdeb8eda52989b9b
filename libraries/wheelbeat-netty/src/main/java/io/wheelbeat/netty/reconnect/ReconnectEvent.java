package io.wheelbeat.netty.reconnect;

import io.netty.channel.Channel;
import java.net.SocketAddress;
import java.time.Duration;

/**
 * What a {@link ReconnectingClient} tells its {@link ReconnectListener}, on its event loop, per
 * connection: {@link Connecting}, {@link Connected} (or a failure, in the next
 * {@link AttemptScheduled} or {@link GaveUp}), {@link Healthy}, {@link Disconnected},
 * {@link AttemptScheduled}. Attempts count from 1 per run of failures; a run begins at
 * {@link ReconnectingClient#start()} or when a healthy connection is lost (its attempt 1).
 */
public sealed interface ReconnectEvent {

    /**
     * An attempt starts: the address is being resolved and connected.
     *
     * @param attempt the number of this attempt in the run, from 1
     * @param remote the address as given, resolved again by this attempt if unresolved
     */
    record Connecting(int attempt, SocketAddress remote) implements ReconnectEvent {}

    /**
     * An attempt connected. The backoff is not reset yet: that waits for {@link Healthy}.
     *
     * @param channel the new connection
     * @param attempt the number of the attempt that connected
     */
    record Connected(Channel channel, int attempt) implements ReconnectEvent {}

    /**
     * The connection has proven healthy, and the backoff is reset: the first heartbeat pong
     * arrived ({@code byPong}), or it stayed connected for the configured time.
     *
     * @param channel the connection
     * @param byPong whether a first pong proved it, rather than time
     */
    record Healthy(Channel channel, boolean byPong) implements ReconnectEvent {}

    /**
     * The connection closed, whoever closed it.
     *
     * @param channel the closed connection
     * @param wasHealthy whether it had proven healthy; if not, it counts as a failed attempt
     */
    record Disconnected(Channel channel, boolean wasHealthy) implements ReconnectEvent {}

    /**
     * The next attempt is on the wheel.
     *
     * @param attempt the number the next attempt will have
     * @param delay the policy's delay, counted from the start of the failed attempt, or from
     *     the disconnect if the connection had proven healthy or the server asked to spread
     *     reconnects ({@link ReconnectingClient#spreadReconnectOver}, whose draw it then is); the
     *     attempt may start sooner after this event, never before that point
     * @param cause why the last attempt failed, or {@code null} when a connection was lost
     */
    record AttemptScheduled(int attempt, Duration delay, Throwable cause) implements ReconnectEvent {}

    /**
     * The policy's attempts are used up; the client makes no more attempts.
     *
     * @param attempts how many attempts the run made
     * @param lastCause why the last attempt failed, or {@code null} when a connection was lost
     */
    record GaveUp(int attempts, Throwable lastCause) implements ReconnectEvent {}
}
