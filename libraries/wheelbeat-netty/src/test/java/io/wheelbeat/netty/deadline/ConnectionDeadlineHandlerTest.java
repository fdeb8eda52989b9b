package io.wheelbeat.netty.deadline;

import static io.wheelbeat.netty.VirtualTime.advance;
import static io.wheelbeat.netty.VirtualTime.frozenChannel;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.DecoderResultProvider;
import io.wheelbeat.core.ScriptedRandom;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.NettyLine;
import io.wheelbeat.netty.UserEvents;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ConnectionDeadlineHandlerTest {

    private final UserEvents events = new UserEvents();

    private EmbeddedChannel channelWith(ConnectionDeadlineHandler.Builder builder) {
        return frozenChannel(builder.build().newHandler(), events);
    }

    private static ConnectionDeadlineHandler.Builder firstMessageWithin(long millis) {
        return ConnectionDeadlineHandler.builder().firstMessageTimeout(Duration.ofMillis(millis));
    }

    private static final MaxConnectionAge AN_HOUR = MaxConnectionAge.of(Duration.ofHours(1));

    private static ConnectionDeadlineHandler.Builder exactAge(long millis) {
        return ConnectionDeadlineHandler.builder()
                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(millis)).withJitter(0));
    }

    private static ConnectionDeadlineHandler.Builder exactAge(long millis, Duration grace) {
        return ConnectionDeadlineHandler.builder()
                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(millis))
                        .withJitter(0)
                        .withGrace(grace));
    }

    // ---------------------------------------------------------------- first message

    @Test
    void staysOpenUntilTheFirstMessageTimeout() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000));
        advance(ch, 999);
        assertTrue(ch.isActive());
        assertTrue(events.all().isEmpty());
    }

    @Test
    void firesFirstMessageTimeoutEventThenClosesWhenNothingIsRead() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000));
        advance(ch, 1002);
        assertFalse(ch.isActive());
        assertEquals(1, events.ofType(FirstMessageTimeoutEvent.class).size());
        assertEquals(
                MILLISECONDS.toNanos(1000),
                events.ofType(FirstMessageTimeoutEvent.class).get(0).timeoutNanos());
        assertTrue(events.activeAt(0), "the event comes while the channel is still open");
    }

    @Test
    void aMessageBeforeTheFirstMessageTimeoutCancelsIt() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000));
        advance(ch, 500);
        ch.writeInbound("hello");
        assertEquals(0, pendingTimers(ch));
        advance(ch, 10_000);
        assertTrue(ch.isActive());
        assertTrue(events.all().isEmpty());
    }

    @Test
    void aMessageItsDecoderFailedOnPassesButLeavesTheFirstMessageTimeoutRunning() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000));
        DecoderResultProvider garbage = new DecoderResultProvider() {
            @Override
            public DecoderResult decoderResult() {
                return DecoderResult.failure(new IllegalArgumentException("not a frame"));
            }

            @Override
            public void setDecoderResult(DecoderResult result) {}
        };
        ch.writeInbound(garbage);
        assertSame(garbage, ch.readInbound());
        advance(ch, 1002);
        assertFalse(ch.isActive());
        assertEquals(1, events.ofType(FirstMessageTimeoutEvent.class).size());
    }

    @Test
    void messagesPassThroughUntouched() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000).maxConnectionAge(AN_HOUR));
        ch.writeInbound("first", "second");
        assertEquals("first", ch.readInbound());
        assertEquals("second", ch.readInbound());
    }

    // ---------------------------------------------------------------- maximum age

    @Test
    void firesMaxConnectionAgeEventAtTheAge() {
        EmbeddedChannel ch = channelWith(exactAge(1000, Duration.ofSeconds(1)));
        advance(ch, 999);
        assertTrue(events.all().isEmpty());
        advance(ch, 3);
        MaxConnectionAgeEvent event = events.ofType(MaxConnectionAgeEvent.class).get(0);
        assertEquals(MILLISECONDS.toNanos(1000), event.ageNanos());
        assertEquals(SECONDS.toNanos(1), event.graceNanos());
        assertTrue(ch.isActive(), "the grace has only begun");
    }

    @Test
    void lowestJitterDrawShortensTheAgeByTheJitterFraction() {
        EmbeddedChannel ch = channelWith(ConnectionDeadlineHandler.builder()
                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(1000)).withJitter(0.1))
                .random(new ScriptedRandom(0.0)));
        advance(ch, 899);
        assertTrue(events.all().isEmpty());
        advance(ch, 3);
        assertEquals(
                MILLISECONDS.toNanos(900),
                events.ofType(MaxConnectionAgeEvent.class).get(0).ageNanos());
    }

    @Test
    void highJitterDrawLengthensTheAge() {
        // A draw of 0.75 moves the age by (2 x 0.75 - 1) x 10% = +5%.
        EmbeddedChannel ch = channelWith(ConnectionDeadlineHandler.builder()
                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(1000)).withJitter(0.1))
                .random(new ScriptedRandom(0.75)));
        advance(ch, 1049);
        assertTrue(events.all().isEmpty());
        advance(ch, 3);
        assertEquals(
                MILLISECONDS.toNanos(1050),
                events.ofType(MaxConnectionAgeEvent.class).get(0).ageNanos());
    }

    @Test
    void defaultJitterSpreadsTheAgesOfConnectionsOpenedTogetherWithinTenPercent() {
        ConnectionDeadlineHandler.Factory factory = ConnectionDeadlineHandler.builder()
                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(1000)))
                .random(new Random(42))
                .build();
        Set<Long> ages = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            UserEvents seen = new UserEvents();
            EmbeddedChannel ch = frozenChannel(factory.newHandler(), seen);
            advance(ch, 1102);
            long age = seen.ofType(MaxConnectionAgeEvent.class).get(0).ageNanos();
            assertTrue(age >= MILLISECONDS.toNanos(900) && age <= MILLISECONDS.toNanos(1100), "age " + age);
            ages.add(MILLISECONDS.convert(age, TimeUnit.NANOSECONDS));
        }
        assertTrue(ages.size() > 100, "200 connections got only " + ages.size() + " distinct ages (ms)");
    }

    @Test
    void closesWhenTheGraceAfterTheAgeIsOver() {
        EmbeddedChannel ch = channelWith(exactAge(1000, Duration.ofMillis(500)));
        advance(ch, 1002);
        advance(ch, 497);
        assertTrue(ch.isActive());
        advance(ch, 4);
        assertFalse(ch.isActive());
        assertEquals(1, events.all().size());
    }

    @Test
    void zeroGraceClosesRightAfterTheAgeEvent() {
        EmbeddedChannel ch = channelWith(exactAge(1000));
        advance(ch, 1002);
        assertFalse(ch.isActive());
        assertEquals(1, events.ofType(MaxConnectionAgeEvent.class).size());
        assertTrue(events.activeAt(0), "the protocol gets the event while it can still say goodbye");
    }

    @Test
    void aListenerThatClosesOnTheAgeEventLeavesNoTimerBehind() {
        EmbeddedChannel ch = frozenChannel(
                exactAge(1000, Duration.ofHours(1)).build().newHandler(), new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        ctx.close();
                    }
                });
        advance(ch, 1002);
        assertFalse(ch.isActive());
        assertEquals(0, pendingTimers(ch));
    }

    // ---------------------------------------------------------------- lifecycle

    @Test
    void startsItsTimersWhenAddedToAnActiveChannel() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000).maxConnectionAge(AN_HOUR));
        assertEquals(2, pendingTimers(ch));
    }

    @Test
    void repeatedActivationEventsDoNotStartTimersTwice() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000).maxConnectionAge(AN_HOUR));
        ch.pipeline().fireChannelRegistered();
        ch.pipeline().fireChannelActive();
        assertEquals(2, pendingTimers(ch));
    }

    @Test
    void closingCancelsEveryTimer() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000).maxConnectionAge(AN_HOUR));
        ch.close();
        assertEquals(0, pendingTimers(ch));
        advance(ch, 2000);
        assertTrue(events.all().isEmpty());
    }

    @Test
    void closingDuringTheGraceCancelsTheGraceTimer() {
        EmbeddedChannel ch = channelWith(exactAge(1000, Duration.ofHours(1)));
        advance(ch, 1002);
        assertEquals(1, pendingTimers(ch));
        ch.close();
        assertEquals(0, pendingTimers(ch));
    }

    @Test
    void removingTheHandlerCancelsEveryTimer() {
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000).maxConnectionAge(AN_HOUR));
        ch.pipeline().remove(ConnectionDeadlineHandler.class);
        assertEquals(0, pendingTimers(ch));
        advance(ch, 2000);
        assertTrue(ch.isActive());
    }

    @Test
    void startsOnChannelActiveNotBeforeAndStopsOnInactive() throws Exception {
        CountDownLatch active = new CountDownLatch(1);
        CountDownLatch inactive = new CountDownLatch(1);
        // Placed after the handler under test, so it sees each event once that handler has.
        ChannelInboundHandlerAdapter witness = new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                active.countDown();
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                inactive.countDown();
            }
        };
        EventLoopGroup group = NettyLine.local(1);
        try {
            LocalAddress address = new LocalAddress("deadline-lifecycle");
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(LocalServerChannel.class)
                    .childHandler(new ChannelInboundHandlerAdapter())
                    .bind(address)
                    .sync()
                    .channel();
            Channel client = new Bootstrap()
                    .group(group)
                    .channel(LocalChannel.class)
                    .handler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline()
                                    .addLast(
                                            firstMessageWithin(3_600_000)
                                                    .maxConnectionAge(AN_HOUR)
                                                    .build()
                                                    .newHandler(),
                                            witness);
                        }
                    })
                    .register()
                    .sync()
                    .channel();
            assertEquals(
                    0, client.eventLoop().submit(() -> pendingTimers(client)).get(), "registered, not active");
            client.connect(address).sync();
            assertTrue(active.await(30, SECONDS));
            assertEquals(
                    2, client.eventLoop().submit(() -> pendingTimers(client)).get());
            client.close();
            assertTrue(inactive.await(30, SECONDS));
            assertEquals(
                    0, client.eventLoop().submit(() -> pendingTimers(client)).get());
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, SECONDS).sync();
        }
    }

    // ---------------------------------------------------------------- settings

    @Test
    void putsTimersOnTheGivenWheels() {
        EventLoopWheels own = new EventLoopWheels(Duration.ofMillis(1), 256);
        EmbeddedChannel ch = channelWith(firstMessageWithin(1000).wheels(own));
        assertEquals(1, own.wheelFor(ch.eventLoop()).pendingTimers());
        assertEquals(0, pendingTimers(ch));
    }

    @Test
    void countsClosesByReason() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ConnectionDeadlineHandler.Factory factory = firstMessageWithin(1000)
                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(2000)).withJitter(0))
                .metrics(registry)
                .build();
        EmbeddedChannel silent = frozenChannel(factory.newHandler());
        EmbeddedChannel talking = frozenChannel(factory.newHandler());
        talking.writeInbound("hello");
        advance(silent, 1002);
        advance(talking, 2002);
        assertEquals(
                1.0,
                registry.get("wheelbeat.connection.closed")
                        .tag("reason", "first_message_timeout")
                        .counter()
                        .count());
        assertEquals(
                1.0,
                registry.get("wheelbeat.connection.closed")
                        .tag("reason", "max_connection_age")
                        .counter()
                        .count());
    }

    @Test
    void rejectsNonPositiveDurations() {
        ConnectionDeadlineHandler.Builder builder = ConnectionDeadlineHandler.builder();
        assertThrows(IllegalArgumentException.class, () -> builder.firstMessageTimeout(Duration.ofSeconds(0)));
        assertThrows(IllegalArgumentException.class, () -> builder.firstMessageTimeout(Duration.ofSeconds(-1)));
    }

    @Test
    void rejectsNulls() {
        ConnectionDeadlineHandler.Builder builder = ConnectionDeadlineHandler.builder();
        assertThrows(NullPointerException.class, () -> builder.firstMessageTimeout(null));
        assertThrows(NullPointerException.class, () -> builder.maxConnectionAge(null));
        assertThrows(NullPointerException.class, () -> builder.wheels(null));
        assertThrows(NullPointerException.class, () -> builder.random(null));
        assertThrows(NullPointerException.class, () -> builder.metrics(null));
    }

    @Test
    void refusesToBuildWithoutADeadline() {
        assertThrows(
                IllegalStateException.class,
                () -> ConnectionDeadlineHandler.builder().build());
    }

    @Test
    void acceptsHugeDurationsAsEffectivelyNever() {
        EmbeddedChannel ch = channelWith(ConnectionDeadlineHandler.builder()
                .maxConnectionAge(
                        MaxConnectionAge.of(Duration.ofNanos(Long.MAX_VALUE)).withJitter(0.5)));
        ch.advanceTimeBy(365, TimeUnit.DAYS);
        ch.runScheduledPendingTasks();
        assertTrue(ch.isActive());
        assertEquals(1, pendingTimers(ch));
    }

    /** The grace HTTP/2 uses to wait for its streams without limit, as gRPC's default. */
    @Test
    void aHugeGraceIsEffectivelyNever() {
        EmbeddedChannel ch = channelWith(exactAge(100, Duration.ofNanos(Long.MAX_VALUE)));
        advance(ch, 110);
        assertEquals(1, events.ofType(MaxConnectionAgeEvent.class).size());
        ch.advanceTimeBy(365, TimeUnit.DAYS);
        ch.runScheduledPendingTasks();
        assertTrue(ch.isActive());
        assertEquals(1, pendingTimers(ch), "the grace timer");
    }

    /**
     * A handler whose start fails (here its wheel's listener throws; on Netty 4.1 before 0.1.0 it was
     * a NoSuchMethodError for EventExecutor.ticker()) is removed cleanly: handlerRemoved has no
     * timers to cancel and must not throw.
     */
    @Test
    void aFailedStartLeavesAHandlerThatRemovesCleanly() {
        VirtualTime.assertAFailedStartRemovesCleanly(
                wheels -> firstMessageWithin(100).wheels(wheels).build().newHandler());
    }
}
