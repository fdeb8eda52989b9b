package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The keepalives' ping loop keeps its schedule wherever the clock starts: at {@code Long.MIN_VALUE},
 * crossing zero, and across the wrap past {@code Long.MAX_VALUE}. Netty's own loop cannot run
 * there (its scheduler saturates deadlines), so the channels live on a {@link WheelIoEventLoopGroup}
 * loop whose clock the test moves ({@link LoopClock}); a {@link HeartbeatHandler} pings every
 * second over Netty's local transport and a peer answers; then the client writes every 700 ms,
 * which postpones every ping (its timer fires early and re-arms for the rest, by difference, while
 * the clock crosses zero or wraps); then the peer falls silent.
 */
class PingLoopAtAnyClockOriginTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @ParameterizedTest(name = "clock starting at {0}")
    @ValueSource(longs = {Long.MIN_VALUE, -12_000_000_000L, 0L, Long.MAX_VALUE - 12_000_000_000L})
    void pingsOnScheduleAndClosesAfterTheMissedPongsWhereverTheClockStarts(long origin) throws Exception {
        LoopClock clock = new LoopClock(origin);
        EventLoopGroup group = clock.wheelGroup();
        AtomicBoolean silent = new AtomicBoolean();
        List<Object> events = new CopyOnWriteArrayList<>();
        List<Long> eventTimes = new CopyOnWriteArrayList<>();
        AtomicInteger progress = new AtomicInteger();
        AtomicInteger pingsSeen = new AtomicInteger();
        try {
            EventLoop loop = group.next();
            LocalAddress address = new LocalAddress("ping-loop-" + origin);
            new ServerBootstrap()
                    .group(group)
                    .channel(LocalServerChannel.class)
                    .childHandler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            progress.incrementAndGet();
                            String text = (String) msg;
                            if (text.startsWith("PING ")) {
                                pingsSeen.incrementAndGet();
                                if (!silent.get()) {
                                    ctx.writeAndFlush("PONG " + text.substring("PING ".length()));
                                }
                            }
                        }
                    })
                    .bind(address)
                    .sync();
            HeartbeatHandler.Factory pinging = HeartbeatHandler.builder()
                    .sendPings(
                            Duration.ofSeconds(1),
                            (channel, id) -> "PING " + id,
                            msg -> msg instanceof String s && s.startsWith("PONG "),
                            msg -> Long.parseLong(((String) msg).substring("PONG ".length())))
                    .pongTimeout(Duration.ofMillis(500))
                    .maxMissedPongs(2)
                    .build();
            Channel client = new Bootstrap()
                    .group(group)
                    .channel(LocalChannel.class)
                    .handler(new ChannelInitializer<LocalChannel>() {
                        @Override
                        protected void initChannel(LocalChannel ch) {
                            ch.pipeline()
                                    .addLast(
                                            new ChannelInboundHandlerAdapter() {
                                                @Override
                                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                                    progress.incrementAndGet();
                                                    ctx.fireChannelRead(msg);
                                                }
                                            },
                                            pinging.newHandler(),
                                            new ChannelInboundHandlerAdapter() {
                                                @Override
                                                public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                                    progress.incrementAndGet();
                                                    events.add(evt);
                                                    eventTimes.add(clock.nanoTime() - origin);
                                                }
                                            });
                        }
                    })
                    .connect(address)
                    .sync()
                    .channel();

            clock.runFor(loop, progress, 10 * SECOND);
            long pongs =
                    events.stream().filter(e -> e instanceof PongReceivedEvent).count();
            // A ping 1 s after the connection's start and after each ping: 10 in 10 s, one STEP late at most.
            assertTrue(pongs >= 9 && pongs <= 10, "pongs in 10 s: " + events + " at " + eventTimes);
            assertTrue(client.isActive());

            // 10 s to 15 s, across the wrap (or zero) at 12 s: a write every 700 ms, so no ping.
            int pingsBefore = pingsSeen.get();
            for (int i = 0; i < 7; i++) {
                loop.submit(() -> client.writeAndFlush("DATA")).sync();
                clock.runFor(loop, progress, 7 * SECOND / 10);
            }
            assertEquals(pingsBefore, pingsSeen.get(), "no ping while the client writes more often than the interval");
            assertTrue(client.isActive());

            silent.set(true);
            long silentFrom = clock.nanoTime() - origin;
            clock.runFor(loop, progress, 5 * SECOND);
            assertFalse(client.isActive(), "closed after two missed pongs");
            HeartbeatFailedEvent failed = (HeartbeatFailedEvent) events.get(events.size() - 1);
            assertEquals(2, failed.missedPongs());
            long failedAfter = eventTimes.get(eventTimes.size() - 1) - silentFrom;
            // The next ping at most 1 s after the silence began, its timeout 0.5 s later, the second
            // ping 1 s after the first and its timeout 0.5 s later: 1.5 to 2.5 s, one STEP late at most.
            assertTrue(
                    failedAfter >= SECOND + SECOND / 2 && failedAfter <= 2 * SECOND + SECOND / 2 + LoopClock.STEP,
                    "closed " + failedAfter + " ns after the peer fell silent");
        } finally {
            clock.shutDown(group);
        }
    }
}
