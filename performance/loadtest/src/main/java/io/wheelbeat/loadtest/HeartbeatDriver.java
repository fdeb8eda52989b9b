package io.wheelbeat.loadtest;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of the scenario: opens the connections at the configured rate (with a cap on
 * connects in flight), sends each connection's hello (its index) and then its heartbeats through
 * the per-loop {@link SendCalendar}s, and silences the connections of the {@link SilencePlan}
 * at their planned times once {@link #beginSilence()} is called.
 *
 * <p>Opening can be paused (every connect in flight finished) so that the heap can be read at
 * a known number of connections; it pauses by itself at the start of each arm's share, until
 * resumed.
 *
 * <p>Thread-safe; the calendars run on their loops, the opening on a thread of its own.
 */
final class HeartbeatDriver implements LoadClient {

    private static final Logger log = LoggerFactory.getLogger(HeartbeatDriver.class);
    private static final int FAILURES_LOGGED = 5;

    private final int connections;
    private final double openRate;
    private final int maxPendingConnects;
    private final SilencePlan plan;
    private final long silenceSpreadNanos;
    private final Bootstrap bootstrap;
    /** Each arm's server, in the round's arm order. */
    private final List<? extends SocketAddress> remotes;

    private final IntFunction<SocketAddress> clientAddresses;
    private final EventLoopGroup group;
    private final LoopThreads threads;
    private final Channel[] channels;
    private final Map<EventExecutor, SendCalendar> calendars = new IdentityHashMap<>();
    private final Semaphore inFlight;
    private final AtomicInteger opened = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final Thread opener;
    private volatile long silenceStartNanos = Long.MAX_VALUE;
    private volatile boolean closing;

    private final Object pauseLock = new Object();
    private volatile boolean pauseRequested;
    private boolean paused;
    private boolean openerDone;

    /** @param remotes each arm's server, in the round's arm order; they take equal consecutive shares */
    HeartbeatDriver(Settings settings, List<? extends SocketAddress> remotes) {
        Transport transport = Transport.of(settings.tier());
        this.connections = settings.connections();
        this.openRate = settings.openRate();
        this.maxPendingConnects = settings.maxPendingConnects();
        this.plan = settings.plan();
        this.silenceSpreadNanos = settings.silenceSpreadNanos();
        this.remotes = List.copyOf(remotes);
        this.threads = new LoopThreads("client");
        this.group = transport.newClientGroup(settings.clientThreads(), threads);
        this.bootstrap = transport.clientBootstrap(
                group,
                settings.protocol() == Protocol.WEBSOCKET
                        ? WebSocketPipelines.clientInitializer(this)
                        : ClientSink.INSTANCE);
        this.clientAddresses = transport.clientAddresses(settings.sourceAddresses());
        this.channels = new Channel[connections];
        this.inFlight = new Semaphore(maxPendingConnects);
        long burstEpoch = Clock.nanoTime();
        int loopIndex = 0;
        for (EventExecutor loop : group) {
            calendars.put(
                    loop,
                    new SendCalendar(this, (EventLoop) loop, settings, settings.seed() + loopIndex++, burstEpoch));
        }
        this.opener = new Thread(this::openAll, "loadtest-opener");
        this.opener.setDaemon(true);
    }

    @Override
    public void start() {
        for (SendCalendar calendar : calendars.values()) {
            calendar.start();
        }
        opener.start();
    }

    @Override
    public int opened() {
        return opened.get();
    }

    @Override
    public int failed() {
        return failed.get();
    }

    @Override
    public boolean rampDone() {
        return opened.get() + failed.get() >= connections;
    }

    /** Returns at once after the ramp. */
    @Override
    public void pauseOpening() throws InterruptedException {
        synchronized (pauseLock) {
            pauseRequested = true;
            while (!paused && !openerDone) {
                pauseLock.wait();
            }
        }
    }

    @Override
    public void resumeOpening() {
        synchronized (pauseLock) {
            pauseRequested = false;
            pauseLock.notifyAll();
        }
    }

    @Override
    public void beginSilence() {
        silenceStartNanos = Clock.nanoTime();
    }

    long silenceStartNanos() {
        return silenceStartNanos;
    }

    /** Whether connection {@code index} is past its planned silence at {@code now}. */
    boolean hasGoneSilent(int index, long now, long silenceStart) {
        return silenceStart != Long.MAX_VALUE
                && plan.isSilent(index)
                && now - silenceStart >= (long) (plan.offset(index) * silenceSpreadNanos);
    }

    Channel channel(int index) {
        return channels[index];
    }

    /** Heartbeats and lag read on each loop; CPU time of the client event loops. */
    @Override
    public ClientStats stats() throws Exception {
        List<Future<long[]>> parts = new ArrayList<>();
        for (SendCalendar calendar : calendars.values()) {
            parts.add(calendar.loop().submit(() -> new long[] {calendar.sent(), calendar.maxLagNanos()}));
        }
        long sent = 0;
        long maxLag = 0;
        for (Future<long[]> part : parts) {
            long[] v = part.get(30, TimeUnit.SECONDS);
            sent += v[0];
            maxLag = Math.max(maxLag, v[1]);
        }
        return new ClientStats(sent, maxLag, threads.cpuNanos());
    }

    private void openAll() {
        long start = System.nanoTime();
        double nanosPerConnect = 1e9 / openRate;
        try {
            for (int i = 0; i < connections && !closing; i++) {
                if (i > 0
                        && Settings.armOf(i, remotes.size(), connections)
                                != Settings.armOf(i - 1, remotes.size(), connections)) {
                    // The next arm's share starts: hold until the server has read the heap of this one.
                    pauseRequested = true;
                }
                if (pauseRequested) {
                    start += holdWhilePaused();
                    if (closing) {
                        break;
                    }
                }
                long wait = start + (long) (i * nanosPerConnect) - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                inFlight.acquire();
                int index = i;
                bootstrap
                        .connect(remotes.get(Settings.armOf(i, remotes.size(), connections)), clientAddresses.apply(i))
                        .addListener((ChannelFuture f) -> connected(index, f));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            synchronized (pauseLock) {
                openerDone = true;
                pauseLock.notifyAll();
            }
        }
    }

    /** Waits for the connects in flight, reports paused, waits to resume; returns the time paused. */
    private long holdWhilePaused() throws InterruptedException {
        inFlight.acquire(maxPendingConnects);
        long pausedAt = System.nanoTime();
        synchronized (pauseLock) {
            paused = true;
            pauseLock.notifyAll();
            while (pauseRequested && !closing) {
                pauseLock.wait();
            }
            paused = false;
        }
        inFlight.release(maxPendingConnects);
        return System.nanoTime() - pausedAt;
    }

    private void connected(int index, ChannelFuture future) {
        inFlight.release();
        if (!future.isSuccess()) {
            if (failed.incrementAndGet() <= FAILURES_LOGGED) {
                log.warn("connection {} failed to open", index, future.cause());
            }
            return;
        }
        Channel channel = future.channel();
        channel.attr(WebSocketPipelines.INDEX).set(index);
        channels[index] = channel;
        opened.incrementAndGet();
        channel.eventLoop().execute(() -> {
            channel.writeAndFlush(
                    channel.alloc().buffer(Integer.BYTES, Integer.BYTES).writeInt(index), channel.voidPromise());
            calendars.get(channel.eventLoop()).addNew(index);
        });
    }

    @Override
    public void closeConnections() {
        closing = true;
        for (Channel channel : channels) {
            if (channel != null) {
                channel.close();
            }
        }
    }

    @Override
    public void close() {
        closing = true;
        resumeOpening();
        opener.interrupt();
        try {
            opener.join(TimeUnit.SECONDS.toMillis(10));
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(2, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The client pipeline: the server sends nothing; a connection that breaks just closes. */
    @ChannelHandler.Sharable
    static final class ClientSink extends ChannelInboundHandlerAdapter {
        static final ClientSink INSTANCE = new ClientSink();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
