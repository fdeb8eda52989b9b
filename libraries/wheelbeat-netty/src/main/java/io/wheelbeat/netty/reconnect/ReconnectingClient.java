package io.wheelbeat.netty.reconnect;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.backoff.BackoffPolicy;
import io.wheelbeat.core.backoff.BackoffSchedule;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.internal.HandlerTimer;
import io.wheelbeat.netty.reconnect.ReconnectEvent.AttemptScheduled;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Connected;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Connecting;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Disconnected;
import io.wheelbeat.netty.reconnect.ReconnectEvent.GaveUp;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Healthy;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client connection that reconnects by itself through a Netty {@link Bootstrap}, each delay and
 * timeout a timer on its event loop's wheel:
 * <ul>
 *   <li>One event loop holds the client's state, timers and listener calls.</li>
 *   <li>Each attempt resolves the address again and has its own
 *       {@linkplain Builder#connectTimeout connect timeout}.</li>
 *   <li>The {@link BackoffPolicy}'s delay runs from the start of the failed attempt and resets only
 *       once a connection proves healthy: a first {@link PongReceivedEvent} or
 *       {@linkplain Builder#healthyAfter a set time}.</li>
 *   <li>A {@link ReconnectGroup} caps the attempts in progress; {@link #spreadReconnectOver(Duration)}
 *       spreads the next attempt when the server asks.</li>
 *   <li>{@link #close()} stops for good, as the event loop's end does; a close by anyone else is a
 *       lost connection.</li>
 * </ul>
 * Pongs are watched by a handler appended to each pipeline: handlers after the heartbeat handler
 * must pass user events on.
 *
 * <p>Thread-safe: {@link #start()}, {@link #close()} and the getters from any thread; the listener
 * runs on the client's event loop.
 */
public final class ReconnectingClient {

    private static final Logger log = LoggerFactory.getLogger(ReconnectingClient.class);
    private static final AttributeKey<ReconnectingClient> CLIENT =
            AttributeKey.valueOf(ReconnectingClient.class, "client");

    private final Bootstrap connector;
    private final EventLoop loop;
    private final ExecutorDrivenWheel wheel;
    private final SocketAddress remote;
    private final BackoffSchedule backoff;
    private final RandomGenerator random;
    private final long connectTimeoutNanos;
    /** 0: only a pong proves health. */
    private final long healthyAfterNanos;

    private final ReconnectGroup group;
    private final ReconnectListener listener;
    private final ReconnectMetrics metrics;

    private final ChannelFutureListener onConnectDone = this::connectDone;
    private final ChannelFutureListener onChannelClosed = this::channelClosed;
    private final GenericFutureListener<Future<Object>> onLoopGone = terminated -> loopGone();
    private final AtomicBoolean started = new AtomicBoolean();
    private final CompletableFuture<Channel> firstConnection = new CompletableFuture<>();
    private final CompletableFuture<Void> closeFuture = new CompletableFuture<>();
    private volatile boolean closed;
    private volatile Channel channel;
    private volatile long currentBackoffNanos;
    /** The window to spread the next reconnect over after a loss; 0 for none. */
    private volatile long spreadWindowNanos;

    // Confined to the event loop.
    private ChannelFuture attempt;
    private boolean permitHeld;
    private int attemptNumber;
    private final HandlerTimer retryTimer = new HandlerTimer(this::onTimer);
    private final HandlerTimer connectTimer = new HandlerTimer(this::onTimer);
    private final HandlerTimer healthyTimer = new HandlerTimer(this::onTimer);
    private int permitRefusals;
    private long lastPermitWaitNanos;
    private boolean healthy;
    private volatile boolean gaveUp;

    private ReconnectingClient(Builder b, RandomGenerator random) {
        this.loop = b.bootstrap.config().group().next();
        this.wheel = b.wheels.wheelFor(loop);
        this.remote = b.remote;
        this.random = random;
        this.backoff = new BackoffSchedule(b.backoff, random);
        this.connectTimeoutNanos = b.connectTimeoutNanos;
        this.healthyAfterNanos = b.healthyAfterNanos;
        this.group = b.group;
        this.listener = b.listener;
        this.metrics = b.metrics;
        ChannelHandler userHandler = b.bootstrap.config().handler();
        ChannelHandler watcher = new HealthWatcher();
        this.connector = b.bootstrap
                .clone(loop)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 0)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.attr(CLIENT).set(ReconnectingClient.this);
                        // The user's handler first, so that the watcher sees what it fires.
                        ch.pipeline().addLast(userHandler).addLast(watcher);
                    }
                });
    }

    /**
     * Starts a client that connects to {@code host:port}, resolving the name on every attempt.
     *
     * @param host the host name, resolved on every attempt
     * @param port the port
     * @return a new builder
     * @param bootstrap a configured bootstrap (group, channel, handler); it is copied, not changed
     * @throws NullPointerException if {@code bootstrap} or {@code host} is null
     * @throws IllegalArgumentException if {@code port} is out of range
     * @throws IllegalStateException if the bootstrap lacks a group, a channel or a handler
     */
    public static Builder builder(Bootstrap bootstrap, String host, int port) {
        Objects.requireNonNull(host, "host");
        return builder(bootstrap, InetSocketAddress.createUnresolved(host, port));
    }

    /**
     * Starts a client that connects to {@code remote}; an unresolved address is resolved on every attempt.
     *
     * @param bootstrap a configured bootstrap: group, channel type and handler
     * @param remote the address to connect to
     * @return a new builder
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if the bootstrap lacks a group, a channel or a handler
     */
    public static Builder builder(Bootstrap bootstrap, SocketAddress remote) {
        return new Builder(bootstrap, remote);
    }

    /**
     * Starts connecting; reconnects from then on until {@link #close()} or until the policy gives
     * up.
     *
     * @return completes with the first connection, or exceptionally if the client gives up
     *     ({@link ConnectException}) or is closed, or its event loop ends ({@link IllegalStateException}), first
     * @throws IllegalStateException if already started or closed
     * @throws RejectedExecutionException if the event loop is shut down
     */
    public CompletableFuture<Channel> start() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("already started");
        }
        loop.execute(this::connect);
        try {
            loop.terminationFuture().addListener(onLoopGone);
        } catch (UnsupportedOperationException neverTerminates) {
            // EmbeddedChannel's loop
        }
        return firstConnection;
    }

    /** The loop ended, and its channels and timers with it: ends the client as {@link #close()} would. */
    private void loopGone() {
        closed = true;
        firstConnection.completeExceptionally(new IllegalStateException("event loop shut down before connecting"));
        closeFuture.complete(null);
    }

    /**
     * Stops for good: cancels a pending or running attempt and closes the connection. Idempotent.
     *
     * @return completes once the connection is closed and no timer of this client is pending
     */
    public CompletableFuture<Void> close() {
        closed = true;
        try {
            loop.terminationFuture().removeListener(onLoopGone); // a long-lived loop must not hold closed clients
        } catch (UnsupportedOperationException neverTerminates) {
            // EmbeddedChannel's loop
        }
        if (loop.inEventLoop()) {
            shutdown();
        } else {
            try {
                loop.execute(this::shutdown);
            } catch (RejectedExecutionException e) {
                // The loop is gone, and its channels and timers with it.
                firstConnection.completeExceptionally(new IllegalStateException("closed before connecting"));
                closeFuture.complete(null);
            }
        }
        return closeFuture;
    }

    /**
     * @param channel the channel
     * @return the client that made {@code channel}, or {@code null} if no client made it
     */
    public static ReconnectingClient of(Channel channel) {
        return channel.hasAttr(CLIENT) ? channel.attr(CLIENT).get() : null;
    }

    /**
     * The server asked to spread reconnects over {@code window}: after the next loss, the next
     * attempt starts a uniform random delay in [0, window) after it instead of the policy's delay;
     * later retries follow the policy. A later call replaces an earlier one; {@link Duration#ZERO}
     * withdraws it. Thread-safe.
     *
     * @param window the time to spread the closes over
     * @throws IllegalArgumentException if {@code window} is negative or longer than 292 years
     */
    public void spreadReconnectOver(Duration window) {
        Objects.requireNonNull(window, "window");
        if (window.isNegative()) {
            throw new IllegalArgumentException("window must not be negative: " + window);
        }
        try {
            spreadWindowNanos = window.toNanos();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("window is too long (over 292 years): " + window, e);
        }
    }

    /** @return the current connection, or {@code null} while there is none */
    public Channel channel() {
        return channel;
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return closed;
    }

    /** @return the event loop that carries every connection, timer and event of this client */
    public EventLoop eventLoop() {
        return loop;
    }

    /** @return the address connected to, as given */
    public SocketAddress remoteAddress() {
        return remote;
    }

    /** The current backoff, read by {@link ReconnectMetrics}' gauge from any thread. */
    long currentBackoffNanos() {
        return currentBackoffNanos;
    }

    // ---------------------------------------------------------------- on the event loop

    private void connect() {
        if (closed) {
            return;
        }
        if (group != null) {
            if (!group.tryAcquire()) {
                waitForPermit();
                return;
            }
            permitHeld = true;
            permitRefusals = 0;
            lastPermitWaitNanos = 0;
        }
        attemptNumber = (int) Math.min(Integer.MAX_VALUE, backoff.failures() + 1L);
        if (metrics != null) {
            metrics.attemptStarted();
        }
        log.debug("{}: attempt {}", this, attemptNumber);
        emit(new Connecting(attemptNumber, remote));
        if (closed) {
            return; // the listener closed the client, and shutdown() returned the permit
        }
        // Read after the event, so that the event never comes later than the start it announces.
        backoff.attemptStarted(wheel.ticker().getAsLong());
        ChannelFuture future = connector.connect(remote);
        attempt = future;
        wheel.schedule(connectTimer, connectTimeoutNanos);
        // Last: a future already done (a failed registration, say) runs the listener at once.
        future.addListener(onConnectDone);
        if (closed) {
            abandonAttempt(); // closed by a handler while the channel was being set up
        }
    }

    private void waitForPermit() {
        if (permitRefusals < Integer.MAX_VALUE) {
            permitRefusals++;
        }
        lastPermitWaitNanos = group.permitWait().delayNanos(permitRefusals, lastPermitWaitNanos, random);
        if (metrics != null) {
            metrics.attemptDeferred();
        }
        wheel.schedule(retryTimer, lastPermitWaitNanos);
    }

    private void onTimer(HandlerTimer timer) {
        if (timer == retryTimer) {
            connect();
        } else if (timer == connectTimer) {
            abandonAttempt();
            attemptFailed(new ConnectTimeoutException("connection attempt timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(connectTimeoutNanos) + " ms: " + remote));
        } else if (timer == healthyTimer) {
            provedHealthy(false);
        }
    }

    private void connectDone(ChannelFuture future) {
        if (future != attempt) {
            // Abandoned on timeout or close: whatever it became is not ours.
            if (future.isSuccess()) {
                future.channel().close();
            }
            return;
        }
        endAttempt();
        if (future.isSuccess()) {
            connected(future.channel());
        } else {
            attemptFailed(future.cause());
        }
    }

    /** Gives up the running attempt, if any: its outcome, when it comes, is ignored. */
    private void abandonAttempt() {
        ChannelFuture running = attempt;
        if (running != null) {
            endAttempt();
            running.channel().close();
        }
    }

    /** The running attempt is over: stops its timeout and returns its permit. */
    private void endAttempt() {
        attempt = null;
        wheel.cancel(connectTimer);
        releasePermit();
    }

    private void releasePermit() {
        if (permitHeld) {
            permitHeld = false;
            group.release();
        }
    }

    private void attemptFailed(Throwable cause) {
        if (metrics != null) {
            metrics.attemptFailed();
        }
        log.debug("{}: attempt {} failed", this, attemptNumber, cause);
        scheduleRetry(cause);
    }

    private void connected(Channel ch) {
        if (metrics != null) {
            metrics.attemptSucceeded();
        }
        if (closed) {
            ch.close();
            return;
        }
        log.debug("{}: connected on attempt {}: {}", this, attemptNumber, ch);
        channel = ch;
        healthy = false;
        emit(new Connected(ch, attemptNumber));
        firstConnection.complete(ch);
        if (healthyAfterNanos > 0 && !closed) {
            // Armed after the event, so that the event never comes later than the uptime's start.
            wheel.schedule(healthyTimer, healthyAfterNanos);
        }
        // Added last: on a channel already closed it runs at once, and Disconnected follows Connected.
        ch.closeFuture().addListener(onChannelClosed);
    }

    private void provedHealthy(boolean byPong) {
        Channel ch = channel;
        if (healthy || ch == null) {
            return;
        }
        healthy = true;
        wheel.cancel(healthyTimer);
        backoff.reset();
        notBackingOff();
        log.debug("{}: healthy ({})", this, byPong ? "first pong" : "connected long enough");
        emit(new Healthy(ch, byPong));
    }

    private void channelClosed(ChannelFuture closeFuture) {
        Channel ch = closeFuture.channel();
        if (ch != channel) {
            return;
        }
        channel = null;
        wheel.cancel(healthyTimer);
        boolean wasHealthy = healthy;
        healthy = false;
        log.debug("{}: disconnected ({})", this, wasHealthy ? "was healthy" : "never proved healthy");
        emit(new Disconnected(ch, wasHealthy));
        long window = spreadWindowNanos;
        if (window > 0) {
            spreadWindowNanos = 0;
            scheduleRetryWithin(window);
        } else {
            scheduleRetry(null);
        }
    }

    /** After a loss the server asked to spread: the next attempt at a uniform draw in the window. */
    private void scheduleRetryWithin(long windowNanos) {
        if (closed) {
            return;
        }
        long now = wheel.ticker().getAsLong();
        if (!backoff.attemptFailed(now)) {
            giveUp(null);
            return;
        }
        long delay = (long) (random.nextDouble() * windowNanos);
        announceRetry(delay, now + delay, null);
    }

    private void scheduleRetry(Throwable cause) {
        if (closed) {
            return;
        }
        if (!backoff.attemptFailed(wheel.ticker().getAsLong())) {
            giveUp(cause);
            return;
        }
        announceRetry(backoff.lastDelayNanos(), backoff.nextAttemptNanos(), cause);
    }

    private void announceRetry(long delayNanos, long deadlineNanos, Throwable cause) {
        currentBackoffNanos = delayNanos;
        if (metrics != null) {
            metrics.backingOff(this);
        }
        wheel.scheduleAt(retryTimer, deadlineNanos);
        int next = (int) Math.min(Integer.MAX_VALUE, backoff.failures() + 1L);
        emit(new AttemptScheduled(next, Duration.ofNanos(delayNanos), cause));
    }

    private void giveUp(Throwable cause) {
        gaveUp = true;
        notBackingOff();
        if (metrics != null) {
            metrics.gaveUp();
        }
        int attempts = backoff.failures();
        log.warn("{}: gave up after {} attempts", this, attempts, cause);
        emit(new GaveUp(attempts, cause));
        ConnectException failure =
                new ConnectException("gave up connecting to " + remote + " after " + attempts + " attempts");
        failure.initCause(cause);
        firstConnection.completeExceptionally(failure);
    }

    private void notBackingOff() {
        currentBackoffNanos = 0;
        if (metrics != null) {
            metrics.notBackingOff(this);
        }
    }

    private void shutdown() {
        wheel.cancel(retryTimer);
        wheel.cancel(healthyTimer);
        abandonAttempt();
        releasePermit(); // taken by an attempt whose Connecting listener closed the client
        notBackingOff();
        firstConnection.completeExceptionally(new IllegalStateException("closed before connecting"));
        Channel ch = channel;
        if (ch == null) {
            closeFuture.complete(null);
        } else {
            ch.close();
            // After onChannelClosed, which was added first: Disconnected comes before completion.
            ch.closeFuture().addListener(f -> closeFuture.complete(null));
        }
    }

    private void emit(ReconnectEvent event) {
        try {
            listener.onEvent(event);
        } catch (Throwable t) {
            log.warn("{}: reconnect listener threw on {}; the client goes on", this, event, t);
        }
    }

    @Override
    public String toString() {
        return "ReconnectingClient(" + remote + (closed ? ", closed" : gaveUp ? ", gave up" : "") + ")";
    }

    /** Turns the first pong of the current connection into proof of health. */
    @ChannelHandler.Sharable
    private final class HealthWatcher extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof PongReceivedEvent pong && pong.first() && ctx.channel() == channel) {
                provedHealthy(true);
            }
            ctx.fireUserEventTriggered(evt);
        }
    }

    /** Settings of a {@link ReconnectingClient}. Not thread-safe. */
    public static final class Builder {
        private final Bootstrap bootstrap;
        private final SocketAddress remote;
        private BackoffPolicy backoff = BackoffPolicy.grpc();
        private long connectTimeoutNanos = TimeUnit.SECONDS.toNanos(20);
        private long healthyAfterNanos = TimeUnit.SECONDS.toNanos(10);
        private ReconnectGroup group;
        private ReconnectListener listener = event -> {};
        private ReconnectMetrics metrics;
        private RandomGenerator random;
        private EventLoopWheels wheels = EventLoopWheels.shared();

        private Builder(Bootstrap bootstrap, SocketAddress remote) {
            this.bootstrap = Objects.requireNonNull(bootstrap, "bootstrap");
            this.remote = Objects.requireNonNull(remote, "remote");
            bootstrap.validate();
        }

        /**
         * The retry delays and the limit on attempts; {@link BackoffPolicy#grpc()} (forever) by
         * default. A lost healthy connection counts as the first attempt of the run that follows.
         *
         * @param policy the backoff policy
         * @return this builder
         */
        public Builder backoff(BackoffPolicy policy) {
            this.backoff = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * How long one attempt (resolving and connecting) may take; 20 s by default.
         *
         * @param timeout the time limit
         * @return this builder
         * @throws IllegalArgumentException if not positive or longer than 292 years
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeoutNanos = ConfigChecks.positiveNanos("connectTimeout", timeout);
            return this;
        }

        /**
         * How long a connection must stay up to prove healthy when no heartbeat pong has proven
         * it sooner; 10 s by default.
         *
         * @param uptime how long a connection must last to count as healthy
         * @return this builder
         * @throws IllegalArgumentException if not positive or longer than 292 years
         */
        public Builder healthyAfter(Duration uptime) {
            this.healthyAfterNanos = ConfigChecks.positiveNanos("healthyAfter", uptime);
            return this;
        }

        /**
         * Only the first heartbeat pong proves a connection healthy, however long it stays up.
         *
         * @return this builder
         */
        public Builder healthyOnlyOnPong() {
            this.healthyAfterNanos = 0;
            return this;
        }

        /**
         * Shares a limit on concurrent attempts with the other clients of {@code group}.
         *
         * @param group the group to share the limit with
         * @return this builder
         */
        public Builder group(ReconnectGroup group) {
            this.group = Objects.requireNonNull(group, "group");
            return this;
        }

        /**
         * Receives the client's events; none by default.
         *
         * @param listener what to call
         * @return this builder
         */
        public Builder listener(ReconnectListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Counts this client in {@code metrics}; no metrics by default.
         *
         * @param metrics the meters to count in
         * @return this builder
         */
        public Builder metrics(ReconnectMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * The source of jitter, used on the client's event loop only; a new {@link SplittableRandom}
         * by default.
         *
         * @param random the source of the jitter; thread-safe
         * @return this builder
         */
        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /**
         * The wheels for the client's timers; {@link EventLoopWheels#shared()} by default.
         *
         * @param wheels the per-event-loop wheels
         * @return this builder
         */
        public Builder wheels(EventLoopWheels wheels) {
            this.wheels = Objects.requireNonNull(wheels, "wheels");
            return this;
        }

        /**
         * Builds the client; nothing connects until {@link ReconnectingClient#start()}.
         *
         * @return the client, not yet started
         */
        public ReconnectingClient build() {
            return new ReconnectingClient(this, random != null ? random : new SplittableRandom());
        }
    }
}
