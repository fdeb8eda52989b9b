package io.wheelbeat.netty.websocket;

import static io.wheelbeat.netty.VirtualTime.advanceTo;
import static io.wheelbeat.netty.VirtualTime.now;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.wheelbeat.core.ScriptedRandom;
import io.wheelbeat.netty.UserEvents;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The WebSocket keepalive's rules in virtual time, behind Netty's real HTTP and WebSocket handlers. */
class WebSocketKeepAliveHandlerTest {

    /** The shared wheels' tick: a timer fires at most this long after its deadline. */
    private static final long TICK = 1L << 20;

    private static final long INTERVAL = SECONDS.toNanos(1);

    private final UserEvents events = new UserEvents();
    private final Errors errors = new Errors();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    /** Pings after 1 s without a write, no jitter, pong timeout 1 s, 3 misses. */
    private WebSocketKeepAliveHandler.Builder keepAlive() {
        return WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofSeconds(1))
                .pingIntervalJitter(0)
                .metrics(registry);
    }

    private WebSocketWire server(WebSocketKeepAliveHandler.Builder builder) {
        return WebSocketWire.server(
                WebSocketWire.serverConfig(), builder.build().newHandler(), events, errors);
    }

    /** A server end whose opening handshake is done; the clock then reads {@link #t0}. */
    private WebSocketWire upgraded(WebSocketKeepAliveHandler.Builder builder) {
        WebSocketWire wire = server(builder);
        wire.handshake();
        t0 = now(wire.ch);
        return wire;
    }

    private long t0;

    private static long pingId(WebSocketFrame frame) {
        ByteBuf data = assertInstanceOf(PingWebSocketFrame.class, frame).content();
        assertEquals(8, data.readableBytes(), "a ping carries its 8-byte id");
        return data.getLong(data.readerIndex());
    }

    private static PongWebSocketFrame pong(long id) {
        return new PongWebSocketFrame(Unpooled.buffer(8).writeLong(id));
    }

    private static void assertClose(WebSocketFrame frame, int status, String reason) {
        CloseWebSocketFrame close = assertInstanceOf(CloseWebSocketFrame.class, frame);
        assertEquals(status, close.statusCode());
        assertEquals(reason, close.reasonText());
    }

    private double counter(String name, String... tags) {
        return registry.get(name).tags(tags).counter().count();
    }

    /** Answers every ping it finds in the channel's output with its pong; returns how many. */
    private static int answerPings(WebSocketWire wire) {
        int answered = 0;
        for (WebSocketFrame frame : wire.received()) {
            if (frame instanceof PingWebSocketFrame ping) {
                wire.send(new PongWebSocketFrame(ping.content().retain()));
                answered++;
            }
            frame.release();
        }
        return answered;
    }

    @Nested
    class Pinging {

        @Test
        void sendsNoPingBeforeTheOpeningHandshake() {
            WebSocketWire wire = server(keepAlive());
            advanceTo(wire.ch, now(wire.ch) + 10 * INTERVAL);
            assertNull(wire.ch.readOutbound());
            assertTrue(wire.ch.isActive());
        }

        @Test
        void pingsWhenNothingWasWrittenForTheIntervalCarryingThePingId() {
            WebSocketWire wire = upgraded(keepAlive());
            advanceTo(wire.ch, t0 + INTERVAL - 1);
            assertTrue(wire.received().isEmpty());
            advanceTo(wire.ch, t0 + INTERVAL + TICK);
            List<WebSocketFrame> frames = wire.received();
            assertEquals(1, frames.size());
            assertTrue(pingId(frames.get(0)) > 3, "an id the peer cannot guess, not 1");
            assertEquals(1, counter("wheelbeat.heartbeat.pings.sent"));
        }

        @Test
        void aPongEchoingThePingReportsThatPingsRoundTripAndIsConsumed() {
            WebSocketWire wire = upgraded(keepAlive());
            advanceTo(wire.ch, t0 + INTERVAL + TICK);
            long id = pingId(wire.received().get(0));
            advanceTo(wire.ch, now(wire.ch) + MILLISECONDS.toNanos(40));
            wire.send(pong(id));
            PongReceivedEvent event = events.ofType(PongReceivedEvent.class).get(0);
            assertTrue(event.first());
            assertTrue(
                    event.roundTripNanos() >= MILLISECONDS.toNanos(40)
                            && event.roundTripNanos() <= MILLISECONDS.toNanos(40) + TICK,
                    event.toString());
            assertNull(wire.ch.readInbound(), "the pong is consumed");
            assertEquals(1, registry.get("wheelbeat.heartbeat.rtt").timer().count());
        }

        @Test
        void aPongWithOtherDataAnswersNoPing() {
            WebSocketWire wire = upgraded(keepAlive());
            advanceTo(wire.ch, t0 + INTERVAL + TICK);
            wire.received();
            wire.send(new PongWebSocketFrame(Unpooled.copiedBuffer("browser", StandardCharsets.US_ASCII)));
            wire.send(pong(7));
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty());
            assertEquals(2, counter("wheelbeat.heartbeat.pongs.late"));
            assertNull(wire.ch.readInbound(), "unasked pongs are consumed too");
        }

        @Test
        void theApplicationsWritesPostponeThePing() {
            WebSocketWire wire = upgraded(keepAlive());
            advanceTo(wire.ch, t0 + INTERVAL / 2);
            wire.ch.writeAndFlush(new TextWebSocketFrame("news"));
            advanceTo(wire.ch, t0 + INTERVAL + TICK);
            List<WebSocketFrame> frames = wire.received();
            assertEquals(1, frames.size());
            assertInstanceOf(TextWebSocketFrame.class, frames.get(0));
            advanceTo(wire.ch, t0 + INTERVAL * 3 / 2 + TICK);
            pingId(wire.received().get(0));
        }

        @Test
        void withoutAJitterSetPingsComeExactlyOneIntervalApartAsNettysWriterIdleDoes() {
            WebSocketWire wire = upgraded(WebSocketKeepAliveHandler.builder().pingInterval(Duration.ofSeconds(1)));
            long lastPing = t0;
            for (int i = 1; i <= 20; i++) {
                advanceTo(wire.ch, lastPing + INTERVAL - 1);
                assertTrue(wire.received().isEmpty(), "no ping before a whole interval, ping " + i);
                advanceTo(wire.ch, lastPing + INTERVAL);
                List<WebSocketFrame> frames = wire.received();
                assertEquals(1, frames.size(), "ping " + i);
                wire.send(pong(pingId(frames.get(0))));
                lastPing = now(wire.ch);
            }
        }

        @Test
        void eachIntervalIsMovedByTheJitter() {
            // Draws 0.0 and 1.0-: the first interval is 0.5 s, the second about 1.5 s.
            WebSocketWire wire = upgraded(keepAlive()
                    .pingIntervalJitter(0.5)
                    .pongTimeout(Duration.ofSeconds(10))
                    .random(new ScriptedRandom(0.0, 0.999_999, 0.5)));
            advanceTo(wire.ch, t0 + INTERVAL / 2 - 1);
            assertTrue(wire.received().isEmpty());
            advanceTo(wire.ch, t0 + INTERVAL / 2 + TICK);
            long firstPing = now(wire.ch);
            long firstId = pingId(wire.received().get(0));
            wire.send(pong(firstId));
            advanceTo(wire.ch, firstPing + INTERVAL * 3 / 2 - MILLISECONDS.toNanos(2));
            assertTrue(wire.received().isEmpty());
            advanceTo(wire.ch, firstPing + INTERVAL * 3 / 2 + TICK);
            assertEquals(firstId + 1, pingId(wire.received().get(0)));
        }

        @Test
        void closesWithGoingAwayAndPingTimeoutAfterTheLastMissedPong() {
            WebSocketWire wire = upgraded(keepAlive().maxMissedPongs(2));
            // Ping 1 at t0 + 1 s, its timeout and ping 2 at 2 s, its timeout at 3 s; never early.
            advanceTo(wire.ch, t0 + 3 * INTERVAL - 1);
            assertTrue(wire.ch.isActive());
            assertTrue(events.ofType(HeartbeatFailedEvent.class).isEmpty());
            advanceTo(wire.ch, t0 + 3 * INTERVAL + 3 * TICK);
            assertFalse(wire.ch.isActive());
            List<WebSocketFrame> frames = wire.received();
            assertEquals(3, frames.size(), frames.toString());
            assertEquals(pingId(frames.get(0)) + 1, pingId(frames.get(1)));
            assertClose(frames.get(2), 1001, WebSocketKeepAliveHandler.PING_TIMEOUT);
            assertEquals(2, events.ofType(HeartbeatFailedEvent.class).get(0).missedPongs());
            assertEquals(2, counter("wheelbeat.heartbeat.pongs.missed"));
            assertEquals(1, counter("wheelbeat.connection.closed", "reason", "heartbeat_timeout"));
        }

        @Test
        void aCloseFrameFromTheApplicationStopsPinging() {
            WebSocketWire wire = upgraded(keepAlive());
            wire.ch.writeAndFlush(new CloseWebSocketFrame(1000, "bye"));
            advanceTo(wire.ch, t0 + 10 * INTERVAL);
            List<WebSocketFrame> frames = wire.received();
            assertEquals(1, frames.size(), frames.toString());
            assertClose(frames.get(0), 1000, "bye");
            long heartbeats = wire.ch.pipeline().toMap().values().stream()
                    .filter(h -> h instanceof HeartbeatHandler)
                    .count();
            assertEquals(0, heartbeats, "the heartbeat before the protocol handler is gone");
            assertTrue(errors.caught.isEmpty(), errors.caught.toString());
        }

        @Test
        void removingTheKeepAliveRemovesItsHeartbeat() {
            WebSocketWire wire = upgraded(keepAlive());
            wire.ch.pipeline().remove(WebSocketKeepAliveHandler.class);
            advanceTo(wire.ch, t0 + 10 * INTERVAL);
            assertTrue(wire.received().isEmpty(), "no ping");
            assertNull(wire.ch.pipeline().get(HeartbeatHandler.class));
            assertTrue(wire.ch.isActive());
        }

        @Test
        void aMoveToAnotherLoopKeepsTheHeartbeatAndItsPingOnTime() throws Exception {
            WebSocketWire wire = upgraded(keepAlive());
            advanceTo(wire.ch, t0 + INTERVAL / 2);
            wire.ch.deregister(); // then registered again, as with another loop
            wire.ch.runPendingTasks();
            wire.ch.register();
            wire.ch.runPendingTasks();
            assertNotNull(wire.ch.pipeline().get(HeartbeatHandler.class));
            advanceTo(wire.ch, t0 + INTERVAL - 1);
            assertTrue(wire.received().isEmpty());
            advanceTo(wire.ch, t0 + INTERVAL + TICK);
            assertEquals(1, wire.received().size(), "the ping, at its time");
            assertTrue(errors.caught.isEmpty(), errors.caught.toString());
        }

        @Test
        void aPeerThatNeverReadsAndPongsWithGuessedIdsIsClosedAfterMaxMissedPongs() {
            // The blind peer: reads nothing, sends a pong every 100 ms with the id guessed
            // from the time elapsed (1 during the first interval after the first ping, then 2, ...).
            WebSocketWire wire = upgraded(keepAlive().maxMissedPongs(3));
            long step = MILLISECONDS.toNanos(100);
            for (long t = t0 + step; t <= t0 + 20 * INTERVAL && wire.ch.isActive(); t += step) {
                advanceTo(wire.ch, t);
                long guess = Math.max(1, (t - t0) / INTERVAL);
                if (wire.ch.isActive()) {
                    wire.send(pong(guess));
                }
            }
            assertFalse(wire.ch.isActive(), "closed");
            // Ping 1 at 1 s, then 3 pong timeouts of 1 s: closed at 4 s, a few wheel ticks late at most.
            assertTrue(
                    now(wire.ch) <= t0 + 4 * INTERVAL + 4 * TICK + MILLISECONDS.toNanos(100),
                    "closed by " + (now(wire.ch) - t0) + " ns");
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty(), "no guessed pong passed for an answer");
            assertEquals(3, events.ofType(HeartbeatFailedEvent.class).get(0).missedPongs());
            List<WebSocketFrame> frames = wire.received();
            assertClose(frames.get(frames.size() - 1), 1001, WebSocketKeepAliveHandler.PING_TIMEOUT);
        }

        @Test
        void thePeersPingsAreAnsweredWithTheirDataEchoed() {
            WebSocketWire wire = upgraded(keepAlive());
            wire.send(new PingWebSocketFrame(Unpooled.buffer(8).writeLong(99)));
            PongWebSocketFrame answer =
                    assertInstanceOf(PongWebSocketFrame.class, wire.received().get(0));
            assertEquals(99, answer.content().getLong(0));
            assertEquals(1, counter("wheelbeat.heartbeat.pings.answered"));
        }

        @Test
        void aPingFloodIsClosedWithPolicyViolationAtItsFourthPingByDefault() {
            WebSocketWire wire = upgraded(keepAlive());
            for (int i = 0; i < 10 && wire.ch.isActive(); i++) {
                wire.send(new PingWebSocketFrame(Unpooled.buffer(8).writeLong(i)));
            }
            assertFalse(wire.ch.isActive());
            List<WebSocketFrame> frames = wire.received();
            assertEquals(4, frames.size(), frames.toString());
            assertTrue(frames.subList(0, 3).stream().allMatch(f -> f instanceof PongWebSocketFrame));
            assertClose(frames.get(3), 1008, WebSocketKeepAliveHandler.TOO_MANY_PINGS);
            assertEquals(1, events.ofType(TooManyPingsEvent.class).size());
            assertEquals(1, counter("wheelbeat.connection.closed", "reason", "too_many_pings"));
        }

        @Test
        void pingsAtTheDefaultMinimumAreAllAnswered() {
            WebSocketWire wire = upgraded(keepAlive());
            for (int i = 0; i < 30; i++) {
                wire.send(new PingWebSocketFrame(Unpooled.buffer(8).writeLong(i)));
                advanceTo(wire.ch, now(wire.ch) + MILLISECONDS.toNanos(100));
                wire.received().forEach(WebSocketFrame::release);
            }
            assertTrue(wire.ch.isActive());
            assertEquals(30, counter("wheelbeat.heartbeat.pings.answered"));
        }

        @Test
        void whileUnwritableThePeersPingsWaitAndOnlyTheLatestIsAnswered() {
            WebSocketWire wire = upgraded(keepAlive().pingLimits(PingLimits.OFF));
            wire.ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(256, 512));
            wire.ch.write(new TextWebSocketFrame("x".repeat(1000))); // not flushed: over the high mark
            assertFalse(wire.ch.isWritable());
            for (int i = 0; i < 10_000; i++) {
                wire.send(new PingWebSocketFrame(Unpooled.buffer(8).writeLong(i)));
            }
            assertFalse(wire.ch.isWritable(), "no pong queued for a peer that reads nothing");
            assertEquals(0, counter("wheelbeat.heartbeat.pings.answered"));
            wire.ch.flush(); // the peer reads
            List<WebSocketFrame> frames = wire.received();
            assertEquals(2, frames.size(), frames.toString());
            assertInstanceOf(TextWebSocketFrame.class, frames.get(0));
            assertEquals(
                    9_999,
                    assertInstanceOf(PongWebSocketFrame.class, frames.get(1))
                            .content()
                            .getLong(0));
            assertEquals(1, counter("wheelbeat.heartbeat.pings.answered"));
        }

        @Test
        void aClientPingsTheServerAndTakesItsPongs() {
            WebSocketWire wire = WebSocketWire.client(
                    WebSocketWire.clientConfig(), keepAlive().build().newHandler(), events, errors);
            advanceTo(wire.ch, now(wire.ch) + 5 * INTERVAL);
            wire.handshake();
            long start = now(wire.ch);
            advanceTo(wire.ch, start + INTERVAL - 1);
            assertTrue(wire.received().isEmpty(), "no ping before the handshake nor before the interval");
            advanceTo(wire.ch, start + INTERVAL + TICK);
            wire.send(pong(pingId(wire.received().get(0))));
            assertEquals(1, events.ofType(PongReceivedEvent.class).size());
            assertTrue(errors.caught.isEmpty(), errors.caught.toString());
        }
    }

    @Nested
    class ReaderIdle {

        /** Pongs may go missing 10 times: the reader idle (3 s, above interval plus pong timeout) decides. */
        private WebSocketKeepAliveHandler.Builder readerIdle() {
            return keepAlive().maxMissedPongs(10);
        }

        /** The documented pipeline: a reader-idle handler of 3 s first, where every frame is read. */
        private WebSocketWire withIdleHandler(WebSocketWire wire) {
            wire.ch
                    .pipeline()
                    .addFirst(WheelIdleStateHandler.builder()
                            .readerIdleTime(Duration.ofSeconds(3))
                            .build()
                            .newHandler());
            return wire;
        }

        private long readerIdleEvents() {
            return events.ofType(IdleStateEvent.class).stream()
                    .filter(e -> e.state() == IdleState.READER_IDLE)
                    .count();
        }

        private WebSocketWire upgradedWithIdle() {
            WebSocketWire wire = withIdleHandler(server(readerIdle()));
            wire.handshake();
            t0 = now(wire.ch);
            return wire;
        }

        @Test
        void closesAPeerThatSendsNothingWithGoingAwayAndIdleTimeout() {
            WebSocketWire wire = upgradedWithIdle();
            advanceTo(wire.ch, t0 + 3 * INTERVAL - 1);
            assertTrue(wire.ch.isActive());
            advanceTo(wire.ch, t0 + 3 * INTERVAL + TICK);
            assertFalse(wire.ch.isActive());
            List<WebSocketFrame> frames = wire.received();
            assertClose(frames.get(frames.size() - 1), 1001, WebSocketKeepAliveHandler.IDLE_TIMEOUT);
            assertEquals(1, readerIdleEvents());
        }

        @Test
        void aMoveToAnotherLoopKeepsTheLastReadsTime() throws Exception {
            WebSocketWire wire = upgradedWithIdle();
            advanceTo(wire.ch, t0 + INTERVAL);
            wire.ch.deregister(); // then registered again, as with another loop
            wire.ch.runPendingTasks();
            wire.ch.register();
            wire.ch.runPendingTasks();
            advanceTo(wire.ch, t0 + 3 * INTERVAL - 1);
            assertTrue(wire.ch.isActive());
            advanceTo(wire.ch, t0 + 3 * INTERVAL + TICK);
            assertFalse(wire.ch.isActive(), "3 s after the last read, not after the move");
        }

        @Test
        void everyReadPostponesTheClose() {
            WebSocketWire wire = upgradedWithIdle();
            advanceTo(wire.ch, t0 + 2 * INTERVAL);
            wire.send(new TextWebSocketFrame("hello"));
            advanceTo(wire.ch, t0 + 5 * INTERVAL - 1);
            assertTrue(wire.ch.isActive());
            advanceTo(wire.ch, t0 + 5 * INTERVAL + TICK);
            assertFalse(wire.ch.isActive());
        }

        @Test
        void aQuietPeerThatAnswersEveryPingIsNeverClosed() {
            WebSocketWire wire = upgradedWithIdle();
            int answered = 0;
            while (now(wire.ch) - t0 < SECONDS.toNanos(60)) {
                advanceTo(wire.ch, now(wire.ch) + MILLISECONDS.toNanos(100));
                answered += answerPings(wire);
            }
            assertTrue(wire.ch.isActive());
            assertTrue(answered >= 50, "pings answered: " + answered);
            assertEquals(answered, events.ofType(PongReceivedEvent.class).size());
            assertEquals(0, readerIdleEvents());
        }

        @Test
        void aConnectionThatNeverSendsItsHandshakeIsClosedAtTheTimeoutWithoutOurCloseFrame() {
            WebSocketWire wire = withIdleHandler(server(readerIdle()));
            long start = now(wire.ch);
            advanceTo(wire.ch, start + 3 * INTERVAL - 1);
            assertTrue(wire.ch.isActive());
            advanceTo(wire.ch, start + 3 * INTERVAL + TICK);
            assertFalse(wire.ch.isActive());
            assertEquals(1, readerIdleEvents());
            for (WebSocketFrame frame : wire.received()) {
                assertFalse(
                        frame instanceof CloseWebSocketFrame close
                                && WebSocketKeepAliveHandler.IDLE_TIMEOUT.equals(close.reasonText()),
                        frame.toString());
            }
        }

        /**
         * Near the top of the clock's range. Not across the wrap, nor near Long.MIN_VALUE: an
         * EmbeddedChannel's clock only moves forward from 0 and Netty's scheduler clamps deadlines
         * past Long.MAX_VALUE. The handlers compare readings by difference only.
         */
        @Test
        void holdsNearTheTopOfTheClocksRange() {
            WebSocketWire wire = withIdleHandler(WebSocketWire.serverAt(
                    Long.MAX_VALUE - SECONDS.toNanos(60),
                    WebSocketWire.serverConfig(),
                    readerIdle().build().newHandler(),
                    events,
                    errors));
            wire.handshake();
            long start = now(wire.ch);
            long lastAnswer = start;
            while (now(wire.ch) - start < SECONDS.toNanos(20)) {
                advanceTo(wire.ch, now(wire.ch) + MILLISECONDS.toNanos(100));
                if (answerPings(wire) > 0) {
                    lastAnswer = now(wire.ch);
                }
            }
            int pongs = events.ofType(PongReceivedEvent.class).size();
            assertTrue(pongs >= 15, "pongs in time: " + pongs);
            // Then the peer falls silent: closed 3 s after its last pong, not before.
            advanceTo(wire.ch, lastAnswer + 3 * INTERVAL - 1);
            assertTrue(wire.ch.isActive());
            advanceTo(wire.ch, lastAnswer + 3 * INTERVAL + TICK);
            assertFalse(wire.ch.isActive());
            assertEquals(1, readerIdleEvents());
        }
    }

    @Nested
    class StartUpCheck {

        /** Pings after the handshake and takes their pongs, which the protocol handler never sees. */
        private void pingsAndTakesThePongs(WebSocketWire wire) {
            wire.handshake();
            long start = now(wire.ch);
            advanceTo(wire.ch, start + INTERVAL + TICK);
            wire.send(pong(pingId(wire.received().get(0))));
            assertTrue(wire.ch.isActive());
            assertEquals(1, events.ofType(PongReceivedEvent.class).size());
            assertTrue(errors.caught.isEmpty(), errors.caught.toString());
        }

        @Test
        void worksWithAServerProtocolHandlerThatDropsPongs() {
            pingsAndTakesThePongs(WebSocketWire.server(
                    WebSocketServerProtocolConfig.newBuilder()
                            .websocketPath("/ws")
                            .build(),
                    keepAlive().build().newHandler(),
                    events,
                    errors));
        }

        @Test
        void worksWithAClientProtocolHandlerThatDropsPongs() {
            pingsAndTakesThePongs(WebSocketWire.client(
                    WebSocketClientProtocolConfig.newBuilder()
                            .webSocketUri("ws://localhost/ws")
                            .build(),
                    keepAlive().build().newHandler(),
                    events,
                    errors));
        }

        @Test
        void refusesAPipelineWithoutAProtocolHandlerBeforeItAtOnce() {
            EmbeddedChannel ch = new EmbeddedChannel(
                    new HttpServerCodec(),
                    keepAlive().build().newHandler(),
                    new WebSocketServerProtocolHandler(WebSocketWire.serverConfig()));
            assertFalse(ch.isActive());
            IllegalStateException refused = assertThrows(IllegalStateException.class, ch::checkException);
            assertTrue(refused.getMessage().contains("no WebSocketServerProtocolHandler"), refused.getMessage());
        }

        @Test
        void acceptsEitherProtocolHandlerAndWritesNothingAtTheHandshake() {
            WebSocketWire server = WebSocketWire.server(
                    WebSocketWire.serverConfig(), keepAlive().build().newHandler(), errors);
            WebSocketWire client = WebSocketWire.client(
                    WebSocketWire.clientConfig(), keepAlive().build().newHandler(), errors);
            server.handshake();
            client.handshake();
            assertTrue(server.ch.isActive());
            assertTrue(client.ch.isActive());
            assertNull(server.ch.readInbound());
            assertNull(client.ch.readInbound());
            assertTrue(errors.caught.isEmpty(), errors.caught.toString());
            assertTrue(server.received().isEmpty() && client.received().isEmpty(), "nothing written");
        }
    }

    @Nested
    class Settings {

        @Test
        void needsThePingInterval() {
            assertThrows(
                    IllegalStateException.class,
                    () -> WebSocketKeepAliveHandler.builder().build());
        }

        @Test
        void checksEveryArgumentWhenSet() {
            WebSocketKeepAliveHandler.Builder builder = WebSocketKeepAliveHandler.builder();
            assertThrows(IllegalArgumentException.class, () -> builder.pingInterval(Duration.ofSeconds(0)));
            assertThrows(IllegalArgumentException.class, () -> builder.pongTimeout(Duration.ofSeconds(-1)));
            assertThrows(IllegalArgumentException.class, () -> builder.maxMissedPongs(0));
            assertThrows(IllegalArgumentException.class, () -> builder.pingIntervalJitter(1));
            assertThrows(NullPointerException.class, () -> builder.pingInterval(null));
        }
    }

    /** Records what reaches the end of the pipeline through exceptionCaught. */
    private static final class Errors extends ChannelInboundHandlerAdapter {
        final List<Throwable> caught = new ArrayList<>();

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            caught.add(cause);
        }

        @Override
        public boolean isSharable() {
            return true;
        }

        String illegalState() {
            return caught.stream()
                    .filter(IllegalStateException.class::isInstance)
                    .findFirst()
                    .map(Throwable::getMessage)
                    .orElseThrow(() -> new AssertionError("no IllegalStateException: " + caught));
        }
    }
}
