package io.wheelbeat.netty.ratelimit;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.ratelimit.KeyLimitPolicy;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.ratelimit.RateLimitExceededEvent.Limited;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The handler on EmbeddedChannels in virtual time. One "server" channel's event loop hosts the
 * limiter's wheel (as a server's boss loop would); every channel shares one mock ticker.
 */
class RateLimitHandlerTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final RateLimit TWO_PER_SECOND = RateLimit.slidingWindow(2, Duration.ofSeconds(1));

    private final MockTicker ticker = Ticker.newMockTicker();
    private final EmbeddedChannel server =
            EmbeddedChannel.builder().ticker(ticker).build();
    private final ExecutorDrivenWheel wheel = EventLoopWheels.shared().wheelFor(server.eventLoop());
    private final KeyedRateLimiter<Object> perAddress =
            KeyedRateLimiter.builder(TWO_PER_SECOND, wheel).name("per-address").build();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void closeChannels() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
        server.finishAndReleaseAll();
    }

    // ---------------------------------------------------------------- connections

    @Test
    void connectionsFromOneAddressBeyondTheLimitAreClosedAtOnce() {
        RateLimitHandler limit =
                RateLimitHandler.builder(perAddress).perConnection().build();
        Recorder first = new Recorder();
        Recorder second = new Recorder();
        Recorder third = new Recorder();
        EmbeddedChannel a = connect("10.0.0.1", 4001, limit, first);
        EmbeddedChannel b = connect("10.0.0.1", 4002, limit, second);
        EmbeddedChannel c = connect("10.0.0.1", 4003, limit, third);

        assertTrue(a.isOpen() && first.active && first.events.isEmpty());
        assertTrue(b.isOpen() && second.active && second.events.isEmpty());
        assertFalse(c.isOpen());
        assertFalse(third.active, "the handlers after the limit never see the connection");
        RateLimitExceededEvent event = third.onlyEvent();
        assertEquals(Limited.CONNECTION, event.limited());
        assertEquals(OverLimitAction.CLOSE, event.action());
        assertEquals("per-address", event.limiterName());
        assertEquals(SECOND + SECOND / 2, event.retryAfterNanos());
    }

    @Test
    void aConnectionLimitWithItsOwnKeysAsksThemWithoutAMessage() {
        List<Object> asked = new ArrayList<>();
        KeyedRateLimiter<String> perTenant = KeyedRateLimiter.builder(TWO_PER_SECOND, wheel)
                .name("per-tenant")
                .build();
        RateLimitHandler limit = RateLimitHandler.builder(perTenant, (channel, msg) -> {
                    asked.add(msg == null ? "no message" : msg);
                    return "tenant-a";
                })
                .perConnection()
                .build();
        Recorder third = new Recorder();
        connect("10.0.0.1", 4001, limit, new Recorder());
        connect("10.0.0.2", 4001, limit, new Recorder());
        EmbeddedChannel c = connect("10.0.0.3", 4001, limit, third);
        assertEquals(List.of("no message", "no message", "no message"), asked);
        assertFalse(c.isOpen(), "three addresses, one tenant: the tenant's limit of two closes the third");
        assertEquals("per-tenant", third.onlyEvent().limiterName());
    }

    @Test
    void eachAddressHasItsOwnConnectionLimit() {
        RateLimitHandler limit =
                RateLimitHandler.builder(perAddress).perConnection().build();
        connect("10.0.0.1", 4001, limit, new Recorder());
        connect("10.0.0.1", 4002, limit, new Recorder());
        assertTrue(connect("10.0.0.2", 4001, limit, new Recorder()).isOpen());
    }

    @Test
    void addressConnectsAgainOnceItsRetryAfterHasPassed() {
        RateLimitHandler limit =
                RateLimitHandler.builder(perAddress).perConnection().build();
        connect("10.0.0.1", 4001, limit, new Recorder());
        connect("10.0.0.1", 4002, limit, new Recorder());
        Recorder refused = new Recorder();
        connect("10.0.0.1", 4003, limit, refused);
        ticker.advance(refused.onlyEvent().retryAfterNanos(), TimeUnit.NANOSECONDS);
        assertTrue(connect("10.0.0.1", 4004, limit, new Recorder()).isOpen());
    }

    @Test
    void admittedConnectionNoLongerCarriesTheHandler() {
        EmbeddedChannel admitted = connect(
                "10.0.0.1",
                4001,
                RateLimitHandler.builder(perAddress).perConnection().build(),
                new Recorder());
        assertNull(admitted.pipeline().get(RateLimitHandler.class));
    }

    @Test
    void newAddressBeyondTheKeyLimitIsClosedWithAKeyLimitEvent() {
        KeyedRateLimiter<Object> oneAddress = KeyedRateLimiter.builder(TWO_PER_SECOND, wheel)
                .maxKeys(1)
                .whenFull(KeyLimitPolicy.REJECT_NEW_KEYS)
                .build();
        RateLimitHandler limit =
                RateLimitHandler.builder(oneAddress).perConnection().build();
        connect("10.0.0.1", 4001, limit, new Recorder());
        Recorder newcomer = new Recorder();
        assertFalse(connect("10.0.0.2", 4001, limit, newcomer).isOpen());
        assertTrue(newcomer.onlyEvent().keyLimitReached());
        assertEquals(-1, newcomer.onlyEvent().retryAfterNanos());
    }

    // ---------------------------------------------------------------- messages

    @Test
    void messagesWithinTheLimitPassUnchanged() {
        EmbeddedChannel channel =
                connect("10.0.0.1", 4001, RateLimitHandler.builder(perAddress).build(), new Recorder());
        ByteBuf first = message("one");
        ByteBuf second = message("two");
        channel.writeInbound(first, second);
        assertSame(first, channel.readInbound());
        assertSame(second, channel.readInbound());
        first.release();
        second.release();
    }

    @Test
    void dropReleasesTheMessageOverTheLimitFiresAnEventAndReadsOn() {
        Recorder recorder = new Recorder();
        EmbeddedChannel channel =
                connect("10.0.0.1", 4001, RateLimitHandler.builder(perAddress).build(), recorder);
        ByteBuf third = message("three");
        channel.writeInbound(message("one"), message("two"), third);

        assertEquals(0, third.refCnt());
        assertEquals(2, channel.inboundMessages().size());
        assertTrue(channel.isOpen());
        RateLimitExceededEvent event = recorder.onlyEvent();
        assertEquals(Limited.MESSAGE, event.limited());
        assertEquals(OverLimitAction.DROP, event.action());
        assertEquals(SECOND + SECOND / 2, event.retryAfterNanos());
    }

    @Test
    void callbackGetsTheMessageOverTheLimitToAnswerSlowDown() {
        Recorder recorder = new Recorder();
        List<Object> handedOver = new ArrayList<>();
        RateLimitHandler limit = RateLimitHandler.builder(perAddress)
                .whenOver((ctx, msg, event) -> {
                    handedOver.add(msg);
                    ReferenceCountUtil.release(msg);
                    ctx.writeAndFlush(message("slow down, retry in " + event.retryAfterNanos() / 1_000_000 + " ms"));
                })
                .build();
        EmbeddedChannel channel = connect("10.0.0.1", 4001, limit, recorder);
        ByteBuf third = message("three");
        channel.writeInbound(message("one"), message("two"), third);

        assertEquals(List.of(third), handedOver);
        ByteBuf reply = channel.readOutbound();
        assertEquals("slow down, retry in 1500 ms", reply.toString(US_ASCII));
        reply.release();
        assertEquals(OverLimitAction.CALLBACK, recorder.onlyEvent().action());
        assertEquals(2, channel.inboundMessages().size());
        assertTrue(channel.isOpen());
    }

    @Test
    void closeReleasesTheMessageAndClosesTheConnection() {
        Recorder recorder = new Recorder();
        EmbeddedChannel channel = connect(
                "10.0.0.1",
                4001,
                RateLimitHandler.builder(perAddress).closeWhenOver().build(),
                recorder);
        ByteBuf third = message("three");
        channel.writeInbound(message("one"), message("two"), third);

        assertFalse(channel.isOpen());
        assertEquals(0, third.refCnt());
        assertEquals(OverLimitAction.CLOSE, recorder.onlyEvent().action());
    }

    @Test
    void messagesStillArrivingAfterTheCloseAreReleasedAndNotCounted() {
        MeterRegistry registry = new SimpleMeterRegistry();
        new KeyedRateLimiterMetrics(perAddress).bindTo(registry);
        EmbeddedChannel channel = connect(
                "10.0.0.1",
                4001,
                RateLimitHandler.builder(perAddress).closeWhenOver().build(),
                new Recorder());
        ByteBuf fourth = message("four");
        ByteBuf fifth = message("five");
        // One batch, as a decoder hands over every frame of one read.
        channel.writeInbound(message("one"), message("two"), message("three"), fourth, fifth);

        assertEquals(0, fourth.refCnt());
        assertEquals(0, fifth.refCnt());
        assertEquals(
                1,
                registry.get("wheelbeat.ratelimit.rejected")
                        .tag("reason", "rate")
                        .functionCounter()
                        .count());
    }

    @Test
    void oneHandlerSharesTheLimitAcrossEveryConnectionOfAnAddress() {
        RateLimitHandler limit = RateLimitHandler.builder(perAddress).build();
        EmbeddedChannel first = connect("10.0.0.1", 4001, limit, new Recorder());
        Recorder secondRecorder = new Recorder();
        EmbeddedChannel second = connect("10.0.0.1", 4002, limit, secondRecorder);
        EmbeddedChannel elsewhere = connect("10.0.0.2", 4001, limit, new Recorder());
        first.writeInbound(message("one"), message("two"));
        second.writeInbound(message("three"));
        elsewhere.writeInbound(message("four"));

        assertEquals(2, first.inboundMessages().size());
        assertEquals(0, second.inboundMessages().size());
        assertEquals(OverLimitAction.DROP, secondRecorder.onlyEvent().action());
        assertEquals(1, elsewhere.inboundMessages().size());
    }

    @Test
    void keyExtractorLimitsEachUserSeparately() {
        KeyedRateLimiter<String> perUser =
                KeyedRateLimiter.builder(TWO_PER_SECOND, wheel).name("per-user").build();
        RateLimitHandler limit = RateLimitHandler.builder(perUser, (channel, msg) -> ((String) msg).split(":")[0])
                .build();
        EmbeddedChannel channel = connect("10.0.0.1", 4001, limit, new Recorder());
        channel.writeInbound("alice:1", "alice:2", "alice:3", "bob:1", "bob:2");

        List<Object> passed = new ArrayList<>(channel.inboundMessages());
        assertEquals(List.of("alice:1", "alice:2", "bob:1", "bob:2"), passed);
    }

    @Test
    void messageWithoutAKeyPassesUncounted() {
        KeyedRateLimiter<String> perUser =
                KeyedRateLimiter.builder(TWO_PER_SECOND, wheel).build();
        RateLimitHandler limit = RateLimitHandler.builder(
                        perUser, (channel, msg) -> msg.equals("ping") ? null : (String) msg)
                .build();
        EmbeddedChannel channel = connect("10.0.0.1", 4001, limit, new Recorder());
        channel.writeInbound("ping", "ping", "ping", "ping");
        assertEquals(4, channel.inboundMessages().size());
        assertEquals(0, perUser.activeKeys());
    }

    @Test
    void failingKeyExtractorReleasesTheMessageAndReportsTheError() {
        RateLimitHandler limit = RateLimitHandler.builder(perAddress, (channel, msg) -> {
                    throw new IllegalArgumentException("malformed frame");
                })
                .build();
        EmbeddedChannel channel = connect("10.0.0.1", 4001, limit, new Recorder());
        ByteBuf frame = message("garbage");
        IllegalArgumentException error =
                assertThrows(IllegalArgumentException.class, () -> channel.writeInbound(frame));
        assertEquals("malformed frame", error.getMessage());
        assertEquals(0, frame.refCnt());
    }

    @Test
    void limitReopensOnceTheRetryAfterHasPassed() {
        Recorder recorder = new Recorder();
        EmbeddedChannel channel =
                connect("10.0.0.1", 4001, RateLimitHandler.builder(perAddress).build(), recorder);
        channel.writeInbound(message("one"), message("two"), message("three"));
        channel.releaseInbound();
        ticker.advance(recorder.onlyEvent().retryAfterNanos() - 1, TimeUnit.NANOSECONDS);
        channel.writeInbound(message("early"));
        assertEquals(0, channel.inboundMessages().size());
        ticker.advance(1, TimeUnit.NANOSECONDS);
        channel.writeInbound(message("on time"));
        assertEquals(1, channel.inboundMessages().size());
    }

    @Test
    void idleAddressesLeaveTheEventLoopsWheel() {
        RateLimitHandler limit = RateLimitHandler.builder(perAddress).build();
        int pendingBefore = wheel.pendingTimers();
        for (int host = 1; host <= 20; host++) {
            connect("10.0.0." + host, 4001, limit, new Recorder()).writeInbound(message("hello"));
        }
        assertEquals(20, perAddress.activeKeys());
        assertEquals(pendingBefore + 20, wheel.pendingTimers());

        ticker.advance(2 * SECOND + TimeUnit.MILLISECONDS.toNanos(2), TimeUnit.NANOSECONDS);
        server.runScheduledPendingTasks();
        assertEquals(0, perAddress.activeKeys());
        assertEquals(pendingBefore, wheel.pendingTimers());
    }

    @Test
    void missingArgumentsAreRefused() {
        assertThrows(NullPointerException.class, () -> RateLimitHandler.builder(null));
        assertThrows(NullPointerException.class, () -> RateLimitHandler.builder(null, KeyExtractor.remoteIp()));
        assertThrows(NullPointerException.class, () -> RateLimitHandler.builder(perAddress, null));
        assertThrows(
                NullPointerException.class,
                () -> RateLimitHandler.builder(perAddress).whenOver(null));
    }

    // ---------------------------------------------------------------- fixture

    private static ByteBuf message(String text) {
        return Unpooled.copiedBuffer(text, US_ASCII);
    }

    /** A channel from {@code host:port}, active, with {@code limit} then {@code recorder}. */
    private EmbeddedChannel connect(String host, int port, RateLimitHandler limit, Recorder recorder) {
        FromAddress channel = new FromAddress(
                new InetSocketAddress(host, port),
                EmbeddedChannel.builder().ticker(ticker).register(false).handlers(limit, recorder));
        try {
            channel.register();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        channels.add(channel);
        return channel;
    }

    /** An EmbeddedChannel whose peer has a real IP address and port. */
    private static final class FromAddress extends EmbeddedChannel {
        private final SocketAddress remote;

        FromAddress(SocketAddress remote, EmbeddedChannel.Builder builder) {
            super(builder);
            this.remote = remote;
        }

        @Override
        protected SocketAddress remoteAddress0() {
            return remote;
        }
    }

    /** Records what reaches the handler after the limit. */
    private static final class Recorder extends ChannelInboundHandlerAdapter {
        final List<RateLimitExceededEvent> events = new ArrayList<>();
        boolean active;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            active = true;
            ctx.fireChannelActive();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof RateLimitExceededEvent event) {
                events.add(event);
            }
            ctx.fireUserEventTriggered(evt);
        }

        RateLimitExceededEvent onlyEvent() {
            assertEquals(1, events.size(), "events: " + events);
            return events.get(0);
        }
    }

    @Test
    void aConnectionOverTheLimitIsAlwaysClosedSoPerConnectionRefusesOtherActions() {
        assertThrows(
                IllegalStateException.class,
                () -> RateLimitHandler.builder(perAddress)
                        .perConnection()
                        .dropWhenOver()
                        .build());
        assertThrows(
                IllegalStateException.class,
                () -> RateLimitHandler.builder(perAddress)
                        .perConnection()
                        .whenOver((ctx, msg, event) -> {})
                        .build());
        RateLimitHandler limit = RateLimitHandler.builder(perAddress)
                .perConnection()
                .closeWhenOver()
                .build();
        assertTrue(limit.toString().contains("CONNECTION"), limit.toString());
    }
}
