package io.wheelbeat.netty.http2;

import static io.wheelbeat.netty.VirtualTime.advanceTo;
import static io.wheelbeat.netty.VirtualTime.now;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static io.wheelbeat.netty.http2.Http2Wire.GOAWAY;
import static io.wheelbeat.netty.http2.Http2Wire.HEADERS;
import static io.wheelbeat.netty.http2.Http2Wire.PING;
import static io.wheelbeat.netty.http2.Http2Wire.SETTINGS;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.ScriptedRandom;
import io.wheelbeat.netty.UserEvents;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.deadline.MaxConnectionAgeEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.http2.Http2Wire.Frame;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The HTTP/2 rules in virtual time, with Netty's real server codec and a peer written by hand. */
class Http2KeepAliveHandlerTest {

    private static final long TICK = 1L << 20;
    private static final int MAX_STREAM_ID = Integer.MAX_VALUE;

    private final UserEvents events = new UserEvents();
    private final Requests requests = new Requests();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private EmbeddedChannel ch;
    private long start;

    /** The application: remembers the open requests and answers one when told. */
    private static final class Requests extends ChannelInboundHandlerAdapter {
        private final Deque<Http2FrameStream> open = new ArrayDeque<>();
        private final List<Long> pingAcks = new java.util.ArrayList<>();
        private ChannelHandlerContext ctx;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Http2HeadersFrame headers) {
                open.add(headers.stream());
            } else if (msg instanceof io.netty.handler.codec.http2.Http2PingFrame ping && ping.ack()) {
                pingAcks.add(ping.content());
            }
            ReferenceCountUtil.release(msg);
        }

        /** Ends the oldest open request with a response (HEADERS, then DATA with END_STREAM). */
        void respond() {
            Http2FrameStream stream = open.remove();
            ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200")).stream(stream));
            ctx.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(new byte[] {1}), true).stream(stream));
        }
    }

    private void start(Http2KeepAliveHandler.Builder builder) {
        ch = new EmbeddedChannel();
        ch.freezeTime();
        startOn(builder);
    }

    /** As {@link #start}, with the handler starting when the clock reads {@code origin}. */
    private void startAt(long origin, Http2KeepAliveHandler.Builder builder) {
        ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.advanceTimeBy(origin - now(ch), NANOSECONDS);
        startOn(builder);
    }

    private void startOn(Http2KeepAliveHandler.Builder builder) {
        ch.pipeline()
                .addLast(
                        Http2FrameCodecBuilder.forServer().build(),
                        builder.metrics(registry).build().newHandler(),
                        requests,
                        events);
        start = now(ch);
        send(Http2Wire.clientPreface());
        sent(); // the server's SETTINGS and its ACK of ours
    }

    private void send(byte[]... bytes) {
        ch.writeInbound(Http2Wire.buf(bytes));
    }

    /** The frames the server wrote since the last call. */
    private List<Frame> sent() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuf buf;
        while ((buf = ch.readOutbound()) != null) {
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            buf.release();
            out.writeBytes(bytes);
        }
        return Http2Wire.parse(out.toByteArray());
    }

    private List<Frame> sent(int type) {
        return sent().stream().filter(f -> f.type() == type).toList();
    }

    private double closed(String reason) {
        return registry.get("wheelbeat.connection.closed")
                .tag("reason", reason)
                .counter()
                .count();
    }

    private static Http2KeepAliveHandler.Builder enforcing() {
        return Http2KeepAliveHandler.builder().pingLimits(PingLimits.of(Duration.ofSeconds(10), 3));
    }

    @Nested
    class PingEnforcement {

        @Test
        void theThirdStrikeInARowGetsGoAwayEnhanceYourCalmTooManyPingsAndACloseAtOnce() {
            start(enforcing().permitKeepAliveWithoutCalls(true));
            send(Http2Wire.ping(1, false), Http2Wire.ping(2, false), Http2Wire.ping(3, false));
            assertTrue(ch.isActive(), "one ping in time, two strikes");
            assertEquals(3, sent(PING).size(), "each acknowledged by the codec");
            send(Http2Wire.ping(4, false));
            assertFalse(ch.isActive());
            Frame goAway = sent(GOAWAY).get(0);
            assertEquals(Http2Wire.ENHANCE_YOUR_CALM, goAway.goAwayErrorCode());
            assertEquals("too_many_pings", goAway.goAwayDebugData());
            assertEquals(3, events.ofType(TooManyPingsEvent.class).get(0).strikes());
            assertEquals(1, closed("too_many_pings"));
        }

        @Test
        void byDefaultAPingFloodIsClosedAtItsFourthPingWithOrWithoutStreamsAndPingsEvery100MsAreFine() {
            start(Http2KeepAliveHandler.builder().metrics(registry));
            for (int i = 0; i < 30; i++) {
                advanceTo(ch, start + MILLISECONDS.toNanos(100L * i));
                send(Http2Wire.ping(i, false));
            }
            assertTrue(ch.isActive(), "one PING per 100 ms, no stream open: no strike");
            assertEquals(30, sent(PING).size());
            send(
                    Http2Wire.ping(30, false),
                    Http2Wire.ping(31, false),
                    Http2Wire.ping(32, false),
                    Http2Wire.ping(33, false),
                    Http2Wire.ping(34, false));
            assertFalse(ch.isActive());
            assertEquals("too_many_pings", sent(GOAWAY).get(0).goAwayDebugData());
            assertEquals(1, closed("too_many_pings"));
        }

        @Test
        void pingsAtTheMinimumIntervalAreFine() {
            start(enforcing().permitKeepAliveWithoutCalls(true));
            for (int i = 0; i < 10; i++) {
                advanceTo(ch, start + SECONDS.toNanos(10L * i));
                send(Http2Wire.ping(i, false));
            }
            assertTrue(ch.isActive());
            assertEquals(10, sent(PING).size());
        }

        @Test
        void withoutCallsAPeerMayPingOnlyOnceInTwoHoursUnlessPermitted() {
            start(enforcing());
            for (int minute = 0; minute < 3; minute++) {
                advanceTo(ch, start + MINUTES.toNanos(minute));
                send(Http2Wire.ping(minute, false));
            }
            assertTrue(ch.isActive(), "one in time, two strikes");
            advanceTo(ch, start + MINUTES.toNanos(3));
            send(Http2Wire.ping(3, false));
            assertFalse(ch.isActive());
        }

        @Test
        void whileAStreamIsOpenTheMinimumIntervalApplies() {
            start(enforcing());
            send(Http2Wire.get(1));
            for (int minute = 0; minute < 5; minute++) {
                advanceTo(ch, start + MINUTES.toNanos(minute));
                send(Http2Wire.ping(minute, false));
            }
            assertTrue(ch.isActive());
        }

        @Test
        void dataTheServerWritesForgivesThePingsSoFar() {
            start(enforcing().permitKeepAliveWithoutCalls(true));
            for (int request = 0; request < 5; request++) {
                int streamId = 1 + 2 * request;
                send(Http2Wire.get(streamId), Http2Wire.ping(streamId, false), Http2Wire.ping(streamId, false));
                requests.respond();
            }
            assertTrue(ch.isActive(), "two quick pings per response, never three strikes in a row");
        }
    }

    @Nested
    class KeepAlivePings {

        private Http2KeepAliveHandler.Builder pinging() {
            return Http2KeepAliveHandler.builder()
                    .keepAliveTime(Duration.ofSeconds(10))
                    .keepAliveTimeout(Duration.ofSeconds(5));
        }

        @Test
        void aPingGoesOutAfterTheKeepAliveTimeWithoutReadsAndItsAckFiresPongReceivedWithTheTrueRtt() {
            start(pinging());
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(10) - 1);
            assertEquals(List.of(), sent(PING));
            advanceTo(ch, start + SECONDS.toNanos(10) + TICK);
            Frame ping = sent(PING).get(0);
            long id = ping.pingContent();
            assertTrue(id > 3, "the first ping's id, which a peer cannot guess: " + id);
            advanceTo(ch, start + SECONDS.toNanos(12));
            send(Http2Wire.ping(1, true), Http2Wire.ping(2, true)); // guessed: someone else's, passed on
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty());
            send(Http2Wire.ping(id, true));
            PongReceivedEvent pong = events.ofType(PongReceivedEvent.class).get(0);
            assertTrue(pong.first());
            assertTrue(Math.abs(pong.roundTripNanos() - SECONDS.toNanos(2)) <= TICK, pong.toString());
            assertEquals(
                    1, registry.get("wheelbeat.heartbeat.pings.sent").counter().count());
            assertEquals(1, registry.get("wheelbeat.heartbeat.rtt").timer().count());

            advanceTo(ch, start + SECONDS.toNanos(22) - TICK);
            assertEquals(List.of(), sent(PING), "the next ping counts from the ACK, a read");
            advanceTo(ch, start + SECONDS.toNanos(22) + TICK);
            assertEquals(id + 1, sent(PING).get(0).pingContent());
            assertTrue(ch.isActive());
        }

        @Test
        void withNoAckAndNothingReadTheConnectionGetsGoAwayPingTimeoutAndClosesAtOnceWithStreamsOpen() {
            start(pinging());
            send(Http2Wire.get(1), Http2Wire.get(3));
            advanceTo(ch, start + SECONDS.toNanos(10) + TICK);
            assertEquals(1, sent(PING).size());
            advanceTo(ch, start + SECONDS.toNanos(15) - TICK);
            assertTrue(ch.isActive(), "never before the timeout");
            advanceTo(ch, start + SECONDS.toNanos(15) + 2 * TICK);
            assertFalse(ch.isActive(), "closed although two streams are open");
            Frame goAway = sent(GOAWAY).get(0);
            assertEquals(Http2Wire.NO_ERROR, goAway.goAwayErrorCode());
            assertEquals("ping_timeout", goAway.goAwayDebugData());
            assertEquals(1, events.ofType(HeartbeatFailedEvent.class).get(0).missedPongs());
            assertEquals(1, closed("heartbeat_timeout"));
            assertEquals(
                    1,
                    registry.get("wheelbeat.heartbeat.pongs.missed").counter().count());
            assertEquals(0, pendingTimers(ch));
        }

        @Test
        void anythingReadWhileThePingIsOutProvesThePeerAlive() {
            start(pinging());
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(10) + TICK);
            List<Frame> first = sent(PING);
            assertEquals(1, first.size());
            advanceTo(ch, start + SECONDS.toNanos(13));
            send(Http2Wire.get(3));
            advanceTo(ch, start + SECONDS.toNanos(20));
            assertTrue(ch.isActive());
            assertTrue(events.ofType(HeartbeatFailedEvent.class).isEmpty());
            advanceTo(ch, start + SECONDS.toNanos(23) + TICK);
            assertEquals(
                    first.get(0).pingContent() + 1,
                    sent(PING).get(0).pingContent(),
                    "next ping 10 s after the last read");
        }

        @Test
        void readsPushTheNextPingBack() {
            start(pinging());
            send(Http2Wire.get(1));
            for (int second = 5; second <= 60; second += 5) {
                advanceTo(ch, start + SECONDS.toNanos(second));
                send(Http2Wire.get(1 + 2 * second));
            }
            assertEquals(List.of(), sent(PING), "never 10 s without a read");
        }

        @Test
        void withoutCallsNoPingGoesOutAndTheFirstStreamResumesThem() {
            start(pinging());
            advanceTo(ch, start + SECONDS.toNanos(100));
            assertEquals(List.of(), sent(PING), "no stream open: paused");
            assertTrue(ch.isActive());
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(110) + TICK);
            List<Frame> pings = sent(PING);
            assertEquals(
                    1,
                    pings.size(),
                    "10 s after the stream's HEADERS, the last read: " + pings + " at " + (now(ch) - start));
        }

        @Test
        void pingsPauseWhenTheLastStreamEndsAndResumeWhenTheNextOneOpens() {
            start(pinging());
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(10) + TICK);
            long id = sent(PING).get(0).pingContent();
            send(Http2Wire.ping(id, true));
            requests.respond();
            advanceTo(ch, start + SECONDS.toNanos(200));
            assertEquals(List.of(), sent(PING), "no stream open since 10 s: paused");
            assertEquals(0, pendingTimers(ch), "paused is no timer at all, not a timer that polls");
            assertTrue(ch.isActive());

            send(Http2Wire.get(3));
            advanceTo(ch, start + SECONDS.toNanos(210) - TICK);
            assertEquals(List.of(), sent(PING), "the peer's new stream is a read");
            advanceTo(ch, start + SECONDS.toNanos(210) + TICK);
            assertEquals(id + 1, sent(PING).get(0).pingContent());
        }

        @Test
        void eachIntervalIsDrawnAnewWithinTheJitter() {
            // Drawn at the start (0.25: 7.5 s), then after each ping (0.75: 12.5 s; 0.5: 10 s).
            ScriptedRandom random = new ScriptedRandom(0.25, 0.75, 0.5);
            start(pinging().keepAliveJitter(0.5).random(random));
            send(Http2Wire.get(1));
            advanceTo(ch, start + MILLISECONDS.toNanos(7_500) - TICK);
            assertEquals(List.of(), sent(PING));
            advanceTo(ch, start + MILLISECONDS.toNanos(7_500) + TICK);
            List<Frame> first = sent(PING);
            assertEquals(1, first.size());
            advanceTo(ch, start + SECONDS.toNanos(8));
            send(Http2Wire.ping(first.get(0).pingContent(), true));
            advanceTo(ch, start + MILLISECONDS.toNanos(20_500) - TICK);
            assertEquals(List.of(), sent(PING), "12.5 s after the ACK, not 7.5 s nor 10 s");
            advanceTo(ch, start + MILLISECONDS.toNanos(20_500) + TICK);
            assertEquals(first.get(0).pingContent() + 1, sent(PING).get(0).pingContent());
            assertEquals(3, random.draws());
        }

        /**
         * Near the top of the clock's range, as the other handlers' tests: not across the wrap,
         * which Netty's own scheduled tasks (that drive the wheel here) do not survive.
         */
        @Test
        void pingAndTimeoutHoldNearTheTopOfTheClocksRange() {
            startAt(Long.MAX_VALUE - SECONDS.toNanos(60), pinging());
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(10) - TICK);
            assertEquals(List.of(), sent(PING));
            advanceTo(ch, start + SECONDS.toNanos(10) + TICK);
            assertEquals(1, sent(PING).size());
            advanceTo(ch, start + SECONDS.toNanos(15) - TICK);
            assertTrue(ch.isActive(), "never before the timeout");
            advanceTo(ch, start + SECONDS.toNanos(15) + 2 * TICK);
            assertFalse(ch.isActive());
            assertEquals("ping_timeout", sent(GOAWAY).get(0).goAwayDebugData());
        }

        @Test
        void aClientOpeningAStreamAfterASilencePingsAtOnceAndLeavesAServerThatNeverAnswers() {
            Http2ChannelDuplexHandler app = new Http2ChannelDuplexHandler() {};
            ch = new EmbeddedChannel();
            ch.freezeTime();
            ch.pipeline()
                    .addLast(
                            Http2FrameCodecBuilder.forClient().build(),
                            pinging().metrics(registry).build().newHandler(),
                            app,
                            events);
            start = now(ch);
            discardOutbound(); // the client's preface and SETTINGS
            send(Http2Wire.frame(SETTINGS, 0, 0, new byte[0]));
            advanceTo(ch, start + SECONDS.toNanos(100));
            assertEquals(List.of(), sent(PING), "no stream open: paused");

            ch.writeAndFlush(new DefaultHttp2HeadersFrame(
                            new DefaultHttp2Headers()
                                    .method("GET")
                                    .scheme("http")
                                    .path("/")
                                    .authority("localhost"),
                            true)
                    .stream(app.newStream()));
            List<Frame> frames = sent();
            assertEquals(1, frames.stream().filter(f -> f.type() == HEADERS).count(), frames.toString());
            assertEquals(
                    1,
                    frames.stream().filter(f -> f.type() == PING).count(),
                    "100 s without a read: the new stream's connection is checked at once " + frames);
            advanceTo(ch, start + SECONDS.toNanos(105) - TICK);
            assertTrue(ch.isActive(), "never before the timeout");
            advanceTo(ch, start + SECONDS.toNanos(105) + 2 * TICK);
            assertFalse(ch.isActive(), "closed with its stream open");
            assertEquals("ping_timeout", sent(GOAWAY).get(0).goAwayDebugData());
            assertEquals(1, events.ofType(HeartbeatFailedEvent.class).size());
            assertEquals(1, closed("heartbeat_timeout"));
            assertEquals(0, pendingTimers(ch));
        }

        private void discardOutbound() {
            ByteBuf buf;
            while ((buf = ch.readOutbound()) != null) {
                buf.release();
            }
        }

        @Test
        void keepAliveWithoutCallsPingsAnIdleConnection() {
            start(pinging().keepAliveWithoutCalls(true));
            advanceTo(ch, start + SECONDS.toNanos(10) + TICK);
            assertEquals(1, sent(PING).size());
        }

        @Test
        void aLateAckIsCountedAndFiresNothingAndAnAckOfSomeoneElsesPingPassesOn() {
            start(pinging().keepAliveWithoutCalls(true));
            advanceTo(ch, start + SECONDS.toNanos(10) + TICK);
            long id = sent(PING).get(0).pingContent();
            send(Http2Wire.ping(id, true));
            send(Http2Wire.ping(id, true));
            assertEquals(1, events.ofType(PongReceivedEvent.class).size());
            assertEquals(
                    1, registry.get("wheelbeat.heartbeat.pongs.late").counter().count());
            send(Http2Wire.ping(0x5EED, true));
            assertEquals(0x5EEDL, requests.pingAcks.get(0), "the application's own PING ACK reaches it");
        }

        @Test
        void keepAliveOptionsNeedTheKeepAliveTime() {
            assertThrows(
                    IllegalStateException.class,
                    () -> Http2KeepAliveHandler.builder()
                            .maxConnectionIdle(Duration.ofSeconds(1))
                            .keepAliveTimeout(Duration.ofSeconds(1))
                            .build());
            assertThrows(
                    IllegalStateException.class,
                    () -> Http2KeepAliveHandler.builder()
                            .maxConnectionIdle(Duration.ofSeconds(1))
                            .keepAliveWithoutCalls(true)
                            .build());
            assertThrows(
                    IllegalArgumentException.class,
                    () -> Http2KeepAliveHandler.builder().keepAliveTime(Duration.ofSeconds(0)));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> Http2KeepAliveHandler.builder().keepAliveJitter(1.0));
        }
    }

    @Nested
    class MaxIdle {

        @Test
        void aConnectionWithoutStreamsIsDrainedWithTwoGoAwaysAndClosed() {
            start(Http2KeepAliveHandler.builder().maxConnectionIdle(Duration.ofSeconds(30)));
            advanceTo(ch, start + SECONDS.toNanos(30) - 1);
            assertEquals(List.of(), sent());
            advanceTo(ch, start + SECONDS.toNanos(30) + TICK);
            assertEquals(
                    SECONDS.toNanos(30),
                    events.ofType(MaxConnectionIdleEvent.class).get(0).idleNanos());
            List<Frame> drain = sent();
            assertEquals(GOAWAY, drain.get(0).type());
            assertEquals(MAX_STREAM_ID, drain.get(0).goAwayLastStreamId());
            assertEquals(Http2Wire.NO_ERROR, drain.get(0).goAwayErrorCode());
            assertEquals("max_idle", drain.get(0).goAwayDebugData());
            assertEquals(PING, drain.get(1).type());
            assertTrue(ch.isActive(), "waits for the peer to see the GOAWAY");

            send(Http2Wire.ping(drain.get(1).pingContent(), true));
            Frame second = sent(GOAWAY).get(0);
            assertEquals(0, second.goAwayLastStreamId());
            assertFalse(ch.isActive());
            assertEquals(1, closed("max_connection_idle"));
            assertEquals(0, pendingTimers(ch));
        }

        @Test
        void aMoveToAnotherLoopKeepsTheIdleSinceTime() throws Exception {
            start(Http2KeepAliveHandler.builder().maxConnectionIdle(Duration.ofSeconds(30)));
            advanceTo(ch, start + SECONDS.toNanos(10));
            ch.deregister(); // then registered again, as with another loop
            ch.runPendingTasks();
            ch.register();
            ch.runPendingTasks();
            advanceTo(ch, start + SECONDS.toNanos(30) - 1);
            assertEquals(List.of(), sent());
            advanceTo(ch, start + SECONDS.toNanos(30) + TICK);
            List<Frame> drain = sent();
            assertFalse(drain.isEmpty(), "no GOAWAY 30 s after the start: idle counted from the move");
            assertEquals(GOAWAY, drain.get(0).type());
        }

        @Test
        void idleTimeCountsFromWhenTheLastStreamEnds() {
            start(Http2KeepAliveHandler.builder().maxConnectionIdle(Duration.ofSeconds(30)));
            advanceTo(ch, start + SECONDS.toNanos(20));
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(100));
            assertTrue(events.ofType(MaxConnectionIdleEvent.class).isEmpty(), "a stream is open");
            requests.respond();
            advanceTo(ch, start + SECONDS.toNanos(130) - 1);
            assertTrue(events.ofType(MaxConnectionIdleEvent.class).isEmpty());
            advanceTo(ch, start + SECONDS.toNanos(130) + TICK);
            assertEquals(1, events.ofType(MaxConnectionIdleEvent.class).size());
        }

        @Test
        void withoutThePingAcknowledgedTheSecondGoAwayGoesAfterTenSeconds() {
            start(Http2KeepAliveHandler.builder().maxConnectionIdle(Duration.ofSeconds(1)));
            advanceTo(ch, start + SECONDS.toNanos(1) + TICK);
            assertEquals(2, sent().size());
            advanceTo(ch, start + SECONDS.toNanos(11) - 1);
            assertTrue(ch.isActive());
            advanceTo(ch, start + SECONDS.toNanos(11) + 2 * TICK);
            assertEquals(0, sent(GOAWAY).get(0).goAwayLastStreamId());
            assertFalse(ch.isActive());
        }
    }

    /** The maximum age is a {@link ConnectionDeadlineHandler}'s, before the codec; its event starts the drain. */
    @Nested
    class MaxAge {

        private void startAged(MaxConnectionAge age) {
            ch = new EmbeddedChannel();
            ch.freezeTime();
            ch.pipeline()
                    .addLast(ConnectionDeadlineHandler.builder()
                            .maxConnectionAge(age.withJitter(0))
                            .metrics(registry)
                            .build()
                            .newHandler());
            startOn(Http2KeepAliveHandler.builder());
        }

        @Test
        void streamsInFlightFinishAndTheLastStreamIdNamesThem() {
            startAged(MaxConnectionAge.of(Duration.ofSeconds(60)).withGrace(Duration.ofMinutes(10)));
            send(Http2Wire.get(1), Http2Wire.get(3));
            advanceTo(ch, start + SECONDS.toNanos(60) - 1);
            assertEquals(List.of(), sent());
            advanceTo(ch, start + SECONDS.toNanos(60) + TICK);
            MaxConnectionAgeEvent age =
                    events.ofType(MaxConnectionAgeEvent.class).get(0);
            assertEquals(SECONDS.toNanos(60), age.ageNanos());
            List<Frame> drain = sent();
            assertEquals("max_age", drain.get(0).goAwayDebugData());
            assertEquals(MAX_STREAM_ID, drain.get(0).goAwayLastStreamId());
            assertEquals(PING, drain.get(1).type());

            send(Http2Wire.ping(drain.get(1).pingContent(), true));
            assertEquals(3, sent(GOAWAY).get(0).goAwayLastStreamId());
            requests.respond();
            assertTrue(ch.isActive(), "stream 3 still open");
            requests.respond();
            assertFalse(ch.isActive());
            assertEquals(1, closed("max_connection_age"));
            assertEquals(0, pendingTimers(ch), "the grace timer goes with the close");
        }

        @Test
        void afterTheGraceTheConnectionClosesWithStreamsStillOpen() {
            startAged(MaxConnectionAge.of(Duration.ofSeconds(60)).withGrace(Duration.ofSeconds(5)));
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(60) + TICK);
            send(Http2Wire.ping(Http2KeepAliveHandler.DRAIN_PING, true));
            assertEquals(1, sent(GOAWAY).get(1).goAwayLastStreamId(), "the second GOAWAY names stream 1");
            advanceTo(ch, start + SECONDS.toNanos(65) - 1);
            assertTrue(ch.isActive());
            advanceTo(ch, start + SECONDS.toNanos(65) + 2 * TICK);
            assertFalse(ch.isActive());
            assertEquals(0, pendingTimers(ch));
        }

        @Test
        void withoutAGraceTheFirstGoAwayGoesOutBeforeTheClose() {
            startAged(MaxConnectionAge.of(Duration.ofSeconds(60)));
            send(Http2Wire.get(1));
            advanceTo(ch, start + SECONDS.toNanos(60) + TICK);
            assertFalse(ch.isActive());
            assertEquals("max_age", sent(GOAWAY).get(0).goAwayDebugData());
            assertEquals(0, pendingTimers(ch));
        }
    }

    @Test
    void withoutAFrameCodecBeforeItTheHandlerFailsAtStartSayingSo() {
        EmbeddedChannel bare = new EmbeddedChannel();
        List<Throwable> failures = new java.util.ArrayList<>();
        bare.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                failures.add(cause);
            }
        });
        bare.pipeline()
                .addFirst(Http2KeepAliveHandler.builder()
                        .maxConnectionIdle(Duration.ofSeconds(1))
                        .build()
                        .newHandler());
        assertTrue(
                failures.get(0).getCause().getMessage().contains("needs Netty's Http2FrameCodec"), failures.toString());
    }

    @Test
    void settingsAreCheckedWhenConfigured() {
        assertThrows(
                IllegalStateException.class,
                () -> Http2KeepAliveHandler.builder().pingLimits(PingLimits.OFF).build());
        Http2KeepAliveHandler.builder().build(); // the default ping-flood limit is a rule
        assertThrows(
                IllegalStateException.class,
                () -> Http2KeepAliveHandler.builder()
                        .pingLimits(PingLimits.OFF)
                        .maxConnectionIdle(Duration.ofSeconds(1))
                        .permitKeepAliveWithoutCalls(true)
                        .build());
        assertThrows(
                IllegalStateException.class,
                () -> Http2KeepAliveHandler.builder()
                        .maxConnectionIdle(Duration.ofSeconds(1))
                        .permitKeepAliveWithoutCalls(true)
                        .build());
        assertThrows(
                NullPointerException.class,
                () -> Http2KeepAliveHandler.builder().pingLimits(null));
    }
}
