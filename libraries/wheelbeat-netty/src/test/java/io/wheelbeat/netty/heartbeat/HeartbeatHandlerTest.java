package io.wheelbeat.netty.heartbeat;

import static io.wheelbeat.netty.VirtualTime.advance;
import static io.wheelbeat.netty.VirtualTime.frozenChannel;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.core.ScriptedRandom;
import io.wheelbeat.netty.UserEvents;
import io.wheelbeat.netty.VirtualTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class HeartbeatHandlerTest {

    private final UserEvents events = new UserEvents();

    private EmbeddedChannel channelWith(HeartbeatHandler.Builder builder) {
        return frozenChannel(builder.build().newHandler(), events);
    }

    /** Moves virtual time 1 ms at a time until a message is written, and returns it. */
    private static Object advanceUntilWritten(EmbeddedChannel ch) {
        Object msg;
        while ((msg = ch.readOutbound()) == null) {
            advance(ch, 1);
        }
        return msg;
    }

    private static List<Object> drainOutbound(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        Object msg;
        while ((msg = ch.readOutbound()) != null) {
            out.add(msg);
        }
        return out;
    }

    /** Pings "PING" every {@code intervalMillis} and takes "PONG" as the pong. */
    private static HeartbeatHandler.Builder pinging(long intervalMillis) {
        return HeartbeatHandler.builder().sendPings(Duration.ofMillis(intervalMillis), ch -> "PING", "PONG"::equals);
    }

    /** Pings "PING id" every {@code intervalMillis} and takes "PONG id" as the pong of ping {@code id}. */
    private static HeartbeatHandler.Builder echoing(long intervalMillis) {
        return HeartbeatHandler.builder()
                .sendPings(
                        Duration.ofMillis(intervalMillis),
                        (ch, id) -> "PING " + id,
                        msg -> msg instanceof String s && s.startsWith("PONG"),
                        msg -> Long.parseLong(((String) msg).substring(5)));
    }

    /**
     * Plays a peer that answers every ping {@code delayMillis} after it, echoing "PING x" as
     * "PONG x", for {@code millis} of virtual time; returns the pings it saw.
     */
    private static List<Object> answerEveryPingAfter(EmbeddedChannel ch, long delayMillis, long millis) {
        List<Object> pings = new ArrayList<>();
        java.util.ArrayDeque<long[]> due = new java.util.ArrayDeque<>(); // {answer at ms, ping index}
        for (long t = 0; t < millis; t++) {
            advance(ch, 1);
            for (Object ping; (ping = ch.readOutbound()) != null; ) {
                pings.add(ping);
                due.add(new long[] {t + delayMillis, pings.size() - 1});
            }
            while (!due.isEmpty() && due.peek()[0] <= t) {
                String ping = (String) pings.get((int) due.poll()[1]);
                if (ch.isActive()) {
                    ch.writeInbound("PONG" + ping.substring(4));
                }
            }
        }
        return pings;
    }

    /** The id that "PING id" carries. */
    private static long idOf(Object ping) {
        return Long.parseLong(((String) ping).substring(5));
    }

    /** The pong that echoes "PING id": "PONG id". */
    private static String pongTo(Object ping) {
        return "PONG" + ((String) ping).substring(4);
    }

    /** Asserts that {@code pings} are "PING id" with ids one up from each other. */
    private static void assertConsecutive(List<Object> pings) {
        for (int i = 1; i < pings.size(); i++) {
            assertEquals(idOf(pings.get(0)) + i, idOf(pings.get(i)), "ping ids count up: " + pings);
        }
    }

    /** Answers every message starting with "PING" with "PONG" and what followed. */
    private static HeartbeatHandler.Builder answering() {
        return HeartbeatHandler.builder()
                .answerPings(
                        msg -> msg instanceof String s && s.startsWith("PING"),
                        (ch, ping) -> "PONG" + ((String) ping).substring(4));
    }

    private static ByteBuf text(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    private static boolean isText(Object msg, String s) {
        return msg instanceof ByteBuf buf
                && buf.toString(StandardCharsets.US_ASCII).equals(s);
    }

    @Nested
    class Pinging {

        @Test
        void sendsAPingWhenNothingWasWrittenForTheInterval() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            advance(ch, 999);
            assertNull(ch.readOutbound());
            advance(ch, 3);
            assertEquals("PING", ch.readOutbound());
        }

        @Test
        void aFlushedWritePostponesThePing() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            advance(ch, 600);
            ch.writeOutbound("data");
            assertEquals("data", ch.readOutbound());
            advance(ch, 999);
            assertNull(ch.readOutbound());
            advance(ch, 3);
            assertEquals("PING", ch.readOutbound());
        }

        @Test
        void aWriteThatIsNotFlushedDoesNotPostponeThePing() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            advance(ch, 600);
            ch.write("unflushed");
            advance(ch, 402);
            assertEquals(List.of("unflushed", "PING"), drainOutbound(ch));
        }

        @Test
        void firesPongReceivedEventWithTheRoundTripTime() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            assertEquals("PING", advanceUntilWritten(ch));
            advance(ch, 30);
            ch.writeInbound("PONG");
            PongReceivedEvent pong = events.ofType(PongReceivedEvent.class).get(0);
            assertEquals(MILLISECONDS.toNanos(30), pong.roundTripNanos());
        }

        @Test
        void onlyTheFirstPongOfTheConnectionIsFlaggedFirst() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            for (int i = 0; i < 3; i++) {
                advance(ch, 1002);
                ch.writeInbound("PONG");
            }
            assertEquals(
                    List.of(true, false, false),
                    events.ofType(PongReceivedEvent.class).stream()
                            .map(PongReceivedEvent::first)
                            .toList());
        }

        @Test
        void consumesPongsAndPassesOtherMessagesOn() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            advance(ch, 1002);
            ch.writeInbound("PONG", "data");
            assertEquals("data", ch.readInbound());
            assertNull(ch.readInbound());
        }

        @Test
        void releasesConsumedPongs() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .sendPings(Duration.ofMillis(1000), c -> text("PING"), msg -> isText(msg, "PONG")));
            advance(ch, 1002);
            ByteBuf pong = text("PONG");
            ch.writeInbound(pong);
            assertEquals(0, pong.refCnt());
            ((ByteBuf) ch.readOutbound()).release();
        }

        @Test
        void theNextIntervalRunsFromThePingNotFromThePong() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            advance(ch, 1002);
            assertEquals("PING", ch.readOutbound());
            advance(ch, 100);
            ch.writeInbound("PONG");
            advance(ch, 897);
            assertNull(ch.readOutbound());
            advance(ch, 5);
            assertEquals("PING", ch.readOutbound());
        }

        @Test
        void closesWithHeartbeatFailedEventAfterMaxMissedPongs() {
            EmbeddedChannel ch = channelWith(
                    pinging(1000).pongTimeout(Duration.ofMillis(500)).maxMissedPongs(3));
            advance(ch, 3000);
            assertTrue(ch.isActive(), "two pongs missed so far");
            advance(ch, 510);
            assertFalse(ch.isActive());
            assertEquals(List.of("PING", "PING", "PING"), drainOutbound(ch));
            HeartbeatFailedEvent failed =
                    events.ofType(HeartbeatFailedEvent.class).get(0);
            assertEquals(3, failed.missedPongs());
            assertTrue(events.activeAt(events.all().indexOf(failed)), "the event comes before the close");
        }

        @Test
        void aPongInTimeClearsTheMissedCount() {
            EmbeddedChannel ch = channelWith(
                    echoing(1000).pongTimeout(Duration.ofMillis(500)).maxMissedPongs(2));
            advance(ch, 1002); // first ping, about 1001
            advance(ch, 500); // missed, about 1502
            advance(ch, 500); // second ping, about 2002
            List<Object> pings = drainOutbound(ch);
            assertEquals(2, pings.size());
            assertConsecutive(pings);
            ch.writeInbound(pongTo(pings.get(1)));
            advance(ch, 1600); // third ping about 3003, missed about 3504: one in a row
            assertTrue(ch.isActive());
            advance(ch, 1000); // fourth ping about 4004, missed about 4505: two in a row
            assertFalse(ch.isActive());
        }

        @Test
        void aLatePongFiresNoEventAndIsConsumed() {
            EmbeddedChannel ch = channelWith(pinging(1000).pongTimeout(Duration.ofMillis(500)));
            advance(ch, 1002);
            advance(ch, 600);
            ch.writeInbound("PONG");
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty());
            assertNull(ch.readInbound());
        }

        @Test
        void aPeerWhosePongsAreAlwaysLateIsClosedAfterMaxMissedPongsAndReportsNoPong() {
            // The peer: ping every 1 s, pong timeout 1 s, 3 misses allowed, every pong 1.2 s late.
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channelWith(echoing(1000)
                    .pongTimeout(Duration.ofMillis(1000))
                    .maxMissedPongs(3)
                    .metrics(registry));
            long start = VirtualTime.now(ch);
            long[] closedAt = {0};
            ch.closeFuture().addListener(f -> closedAt[0] = VirtualTime.now(ch));
            List<Object> pings = answerEveryPingAfter(ch, 1200, 20_000);
            assertFalse(ch.isActive());
            assertEquals(3, pings.size());
            assertConsecutive(pings);
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty(), "no pong reported: " + events.all());
            assertEquals(3, events.ofType(HeartbeatFailedEvent.class).get(0).missedPongs());
            long closedAfterMillis = (closedAt[0] - start) / 1_000_000;
            // First ping at 1 s, then 3 pong timeouts of 1 s: closed at 4 s, each step late by at most a wheel tick.
            assertTrue(
                    closedAfterMillis >= 4000 && closedAfterMillis <= 4008,
                    "closed after " + closedAfterMillis + " ms");
            assertEquals(
                    2.0,
                    registry.get("wheelbeat.heartbeat.pongs.late").counter().count(),
                    "the pongs of pings 1 and 2 came, late; ping 3's would come after the close");
        }

        @Test
        void aPeerWhosePongsAreAlwaysLateIsClosedAlsoWhenPongsAnswerByOrder() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .sendPings(
                            Duration.ofMillis(1000),
                            c -> "PING",
                            msg -> msg instanceof String s && s.startsWith("PONG"))
                    .pongTimeout(Duration.ofMillis(1000))
                    .maxMissedPongs(3));
            List<Object> pings = answerEveryPingAfter(ch, 1200, 20_000);
            assertFalse(ch.isActive());
            assertEquals(3, pings.size());
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty(), "no pong reported: " + events.all());
            assertEquals(1, events.ofType(HeartbeatFailedEvent.class).size());
        }

        @Test
        void aLatePongIsDroppedAndThePongInTimeReportsTheRoundTripOfItsOwnPing() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channelWith(
                    echoing(1000).pongTimeout(Duration.ofMillis(500)).metrics(registry));
            Object ping1 = advanceUntilWritten(ch);
            advance(ch, 502); // ping 1 times out
            Object ping2 = advanceUntilWritten(ch);
            assertEquals(idOf(ping1) + 1, idOf(ping2));
            long ping2At = VirtualTime.now(ch);
            advance(ch, 100);
            ch.writeInbound(pongTo(ping1)); // late: answers ping 1
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty());
            advance(ch, 200);
            ch.writeInbound(pongTo(ping2));
            PongReceivedEvent pong = events.ofType(PongReceivedEvent.class).get(0);
            assertEquals(VirtualTime.now(ch) - ping2At, pong.roundTripNanos());
            assertTrue(pong.first(), "the first pong in time is the first");
            assertEquals(
                    1.0,
                    registry.get("wheelbeat.heartbeat.pongs.late").counter().count());
            assertEquals(1, registry.get("wheelbeat.heartbeat.rtt").timer().count());
        }

        @Test
        void aLatePongDoesNotClearTheMissedCount() {
            EmbeddedChannel ch = channelWith(
                    echoing(1000).pongTimeout(Duration.ofMillis(500)).maxMissedPongs(2));
            Object ping1 = advanceUntilWritten(ch);
            advance(ch, 502); // missed 1
            ch.writeInbound(pongTo(ping1));
            assertEquals(idOf(ping1) + 1, idOf(advanceUntilWritten(ch)));
            advance(ch, 502); // missed 2 in a row: the late pong did not count
            assertFalse(ch.isActive());
        }

        @Test
        void aPongEchoingAnIdOfNoPingIsLate() {
            EmbeddedChannel ch = channelWith(echoing(1000));
            long id = idOf(advanceUntilWritten(ch));
            ch.writeInbound("PONG " + (id + 1), "PONG " + (id - 1), "PONG 0", "PONG 1", "PONG -1");
            assertTrue(events.all().isEmpty());
            ch.writeInbound("PONG " + id);
            assertEquals(1, events.ofType(PongReceivedEvent.class).size());
        }

        @Test
        void aThrowingPongIdFunctionIsReportedAndThePongIsLate() {
            EmbeddedChannel ch = channelWith(echoing(1000));
            assertTrue(idOf(advanceUntilWritten(ch)) > 0);
            assertThrows(NumberFormatException.class, () -> ch.writeInbound("PONG x"));
            assertNull(ch.readInbound(), "a pong is consumed even when its id cannot be read");
            assertTrue(events.all().isEmpty());
        }

        @Test
        void pingIdsCountThePingsSentAndSkipNoNumberWhenTheFactoryFails() {
            AtomicInteger calls = new AtomicInteger();
            List<Long> ids = new ArrayList<>();
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .sendPings(
                            Duration.ofMillis(1000),
                            (c, id) -> {
                                ids.add(id);
                                if (calls.incrementAndGet() == 2) {
                                    throw new IllegalStateException("not this time");
                                }
                                return "PING " + id;
                            },
                            "PONG"::equals,
                            msg -> HeartbeatHandler.NO_PING));
            advance(ch, 1002); // ping 1, pong timeout at 2 s
            advance(ch, 1000); // ping 2 fails
            assertThrows(IllegalStateException.class, ch::checkException);
            advance(ch, 1002);
            List<Object> pings = drainOutbound(ch);
            assertEquals(2, pings.size());
            assertConsecutive(pings);
            long first = ids.get(0);
            assertEquals(List.of(first, first + 1, first + 1), ids);
        }

        @Test
        void pingIdsStartAtARandomPointPerConnectionSoThatBlindPongsAreLate() {
            // The blind peer: reads nothing, sends a pong every 100 ms with the id guessed
            // from the seconds elapsed (ping n goes out at n s, so "PONG n" would answer it in time).
            HeartbeatHandler.Builder builder =
                    echoing(1000).pongTimeout(Duration.ofMillis(500)).maxMissedPongs(3);
            EmbeddedChannel ch = channelWith(builder);
            long start = VirtualTime.now(ch);
            for (int step = 0; step < 200 && ch.isActive(); step++) {
                advance(ch, 100);
                long guess = Math.max(1, (VirtualTime.now(ch) - start) / 1_000_000_000L);
                if (ch.isActive()) {
                    ch.writeInbound("PONG " + guess);
                }
            }
            assertFalse(ch.isActive(), "3 missed pongs close the blind peer");
            long closedAfterMillis = (VirtualTime.now(ch) - start) / 1_000_000;
            assertTrue(closedAfterMillis <= 3_600, "ping 3 at 3 s, its timeout at 3.5 s: " + closedAfterMillis);
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty(), "no guessed pong passed: " + events.all());
            assertEquals(3, events.ofType(HeartbeatFailedEvent.class).get(0).missedPongs());
            List<Object> pings = drainOutbound(ch);
            assertEquals(3, pings.size());
            assertConsecutive(pings);
            assertTrue(idOf(pings.get(0)) > 3, "ids are positive and not 1, 2, 3: " + pings);
            EmbeddedChannel other = frozenChannel(builder.build().newHandler());
            assertNotEquals(
                    idOf(pings.get(0)), idOf(advanceUntilWritten(other)), "each connection draws its own start");
        }

        @Test
        void byOrderAnUnaskedPongDoesNotMakeTheNextPongLate() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            ch.writeInbound("PONG"); // before any ping: answers none
            assertEquals("PING", advanceUntilWritten(ch));
            ch.writeInbound("PONG");
            assertEquals(1, events.ofType(PongReceivedEvent.class).size());
        }

        @Test
        void byOrderAPeerThatSkipsAnAnswerIsOneBehindAndClosed() {
            EmbeddedChannel ch = channelWith(
                    pinging(1000).pongTimeout(Duration.ofMillis(500)).maxMissedPongs(2));
            assertEquals("PING", advanceUntilWritten(ch));
            advance(ch, 502); // no answer to ping 1
            assertEquals("PING", advanceUntilWritten(ch));
            ch.writeInbound("PONG"); // taken as ping 1's answer: late
            advance(ch, 502);
            assertFalse(ch.isActive());
            assertTrue(events.ofType(PongReceivedEvent.class).isEmpty());
        }

        @Test
        void toldTooManyPingsTheIntervalDoublesForThisAndLaterConnections() {
            HeartbeatHandler.Factory factory = echoing(1000).build();
            EmbeddedChannel ch = frozenChannel(factory.newHandler());
            EmbeddedChannel other = frozenChannel(factory.newHandler());
            Object ping1 = advanceUntilWritten(ch);
            advanceUntilWritten(other);
            ch.pipeline().get(HeartbeatHandler.class).peerSaysTooManyPings();
            other.pipeline().get(HeartbeatHandler.class).peerSaysTooManyPings();
            assertEquals(
                    java.time.Duration.ofSeconds(2), factory.pingInterval(), "doubled once, not once per connection");
            ch.writeInbound(pongTo(ping1));
            advance(ch, 1999);
            assertNull(ch.readOutbound(), "the next interval is 2 s");
            advance(ch, 4);
            assertEquals(idOf(ping1) + 1, idOf(ch.readOutbound()));
            EmbeddedChannel later = frozenChannel(factory.newHandler());
            advance(later, 1999);
            assertNull(later.readOutbound());
            advance(later, 4);
            assertTrue(later.readOutbound().toString().startsWith("PING "));
            later.pipeline().get(HeartbeatHandler.class).peerSaysTooManyPings();
            assertEquals(java.time.Duration.ofSeconds(4), factory.pingInterval());
        }

        @Test
        void connectionsOnManyThreadsToldTooManyPingsAtOnceDoubleTheIntervalOnce() throws Exception {
            for (int round = 0; round < 50; round++) {
                HeartbeatHandler.Factory factory = echoing(1000).build();
                List<HeartbeatHandler> handlers = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    handlers.add(frozenChannel(factory.newHandler()).pipeline().get(HeartbeatHandler.class));
                }
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(handlers.size());
                List<Thread> threads = new ArrayList<>();
                for (HeartbeatHandler handler : handlers) {
                    Thread thread = new Thread(() -> {
                        try {
                            start.await();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        handler.peerSaysTooManyPings();
                    });
                    threads.add(thread);
                    thread.start();
                }
                for (Thread thread : threads) {
                    thread.join();
                }
                assertEquals(java.time.Duration.ofSeconds(2), factory.pingInterval(), "round " + round);
            }
        }

        @Test
        void anUnaskedPongFiresNoEvent() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            ch.writeInbound("PONG");
            assertTrue(events.all().isEmpty());
        }

        @Test
        void sendsNoSecondPingWhileAPongIsAwaited() {
            EmbeddedChannel ch = channelWith(pinging(1000).pongTimeout(Duration.ofMillis(3000)));
            advance(ch, 1002);
            advance(ch, 2990);
            assertEquals(List.of("PING"), drainOutbound(ch));
            advance(ch, 12); // the pong timed out, and the interval is long over
            assertEquals(List.of("PING"), drainOutbound(ch), "a new ping at once");
        }

        @Test
        void jitterMovesEachIntervalByItsOwnDraw() {
            // Draws 0.0 and 0.75 with 10% jitter: intervals of 900 ms then 1050 ms.
            ScriptedRandom random = new ScriptedRandom(0.0, 0.75, 0.5);
            EmbeddedChannel ch =
                    channelWith(pinging(1000).pingIntervalJitter(0.1).random(random));
            advance(ch, 899);
            assertNull(ch.readOutbound());
            advance(ch, 3);
            assertEquals("PING", ch.readOutbound());
            ch.writeInbound("PONG");
            advance(ch, 1047);
            assertNull(ch.readOutbound());
            advance(ch, 5);
            assertEquals("PING", ch.readOutbound());
            assertEquals(3, random.draws(), "one draw per interval");
        }

        @Test
        void jitterSpreadsTheFirstPingsOfConnectionsOpenedTogether() {
            HeartbeatHandler.Factory factory =
                    pinging(1000).pingIntervalJitter(0.1).random(new Random(7)).build();
            Set<Long> firstPingMillis = new HashSet<>();
            for (int i = 0; i < 100; i++) {
                EmbeddedChannel ch = frozenChannel(factory.newHandler());
                long start = VirtualTime.now(ch);
                advanceUntilWritten(ch);
                long elapsed = MILLISECONDS.convert(VirtualTime.now(ch) - start, NANOSECONDS);
                assertTrue(elapsed >= 900 && elapsed <= 1102, "first ping after " + elapsed + " ms");
                firstPingMillis.add(elapsed);
            }
            assertTrue(
                    firstPingMillis.size() >= 50,
                    "100 connections pinged in only " + firstPingMillis.size() + " distinct milliseconds");
        }

        @Test
        void aFailingPingFactoryIsReportedAndTriedAgainNextInterval() {
            AtomicInteger calls = new AtomicInteger();
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .sendPings(
                            Duration.ofMillis(1000),
                            c -> {
                                if (calls.incrementAndGet() == 1) {
                                    throw new IllegalStateException("no ping today");
                                }
                                return "PING";
                            },
                            "PONG"::equals));
            advance(ch, 1002);
            assertThrows(IllegalStateException.class, ch::checkException);
            assertNull(ch.readOutbound());
            advance(ch, 1002);
            assertEquals("PING", ch.readOutbound());
            assertTrue(ch.isActive());
        }

        @Test
        void aPingFactoryReturningNullIsReported() {
            EmbeddedChannel ch = channelWith(
                    HeartbeatHandler.builder().sendPings(Duration.ofMillis(1000), c -> null, "PONG"::equals));
            advance(ch, 1002);
            NullPointerException e = assertThrows(NullPointerException.class, ch::checkException);
            assertTrue(e.getMessage().contains("ping factory"), e.getMessage());
            assertTrue(ch.isActive());
        }

        @Test
        void aThrowingMatcherIsReportedAndTheMessagePassesOn() {
            EmbeddedChannel ch =
                    channelWith(HeartbeatHandler.builder().sendPings(Duration.ofMillis(1000), c -> "PING", msg -> {
                        throw new IllegalArgumentException("cannot tell");
                    }));
            assertThrows(IllegalArgumentException.class, () -> ch.writeInbound("data"));
            assertEquals("data", ch.readInbound());
        }

        @Test
        void closingCancelsTheTimers() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            advance(ch, 1002); // a pong is awaited
            assertEquals(1, pendingTimers(ch));
            ch.close();
            assertEquals(0, pendingTimers(ch));
        }

        @Test
        void removingTheHandlerCancelsTheTimers() {
            EmbeddedChannel ch = channelWith(pinging(1000));
            assertEquals(1, pendingTimers(ch));
            ch.pipeline().remove(HeartbeatHandler.class);
            assertEquals(0, pendingTimers(ch));
            advance(ch, 5000);
            assertNull(ch.readOutbound());
        }

        @Test
        void recordsPingsPongsMissesAndRoundTripsInMetrics() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channelWith(pinging(1000)
                    .pongTimeout(Duration.ofMillis(500))
                    .maxMissedPongs(1)
                    .metrics(registry));
            assertEquals("PING", advanceUntilWritten(ch));
            advance(ch, 40);
            ch.writeInbound("PONG");
            advance(ch, 1000);
            advance(ch, 503);
            assertFalse(ch.isActive());
            assertEquals(
                    2.0,
                    registry.get("wheelbeat.heartbeat.pings.sent").counter().count());
            assertEquals(
                    1.0,
                    registry.get("wheelbeat.heartbeat.pongs.missed").counter().count());
            Timer rtt = registry.get("wheelbeat.heartbeat.rtt").timer();
            assertEquals(1, rtt.count());
            assertEquals(40.0, rtt.totalTime(MILLISECONDS));
            assertEquals(
                    1.0,
                    registry.get("wheelbeat.connection.closed")
                            .tag("reason", "heartbeat_timeout")
                            .counter()
                            .count());
        }
    }

    @Nested
    class Answering {

        @Test
        void answersAPingWithThePongMadeFromItAndConsumesThePing() {
            EmbeddedChannel ch = channelWith(answering());
            ch.writeInbound("PING 7");
            assertEquals("PONG 7", ch.readOutbound());
            assertNull(ch.readInbound());
        }

        @Test
        void releasesThePingAfterThePongFactoryHasReadIt() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .answerPings(
                            msg -> isText(msg, "PING"),
                            (c, ping) -> "PONG for " + ((ByteBuf) ping).toString(StandardCharsets.US_ASCII)));
            ByteBuf ping = text("PING");
            ch.writeInbound(ping);
            assertEquals("PONG for PING", ch.readOutbound());
            assertEquals(0, ping.refCnt());
        }

        @Test
        void pingsAtTheMinimumIntervalAreAllAnswered() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channelWith(answering()
                    .pingLimits(PingLimits.of(Duration.ofMillis(1000), 3))
                    .metrics(registry));
            for (int i = 0; i < 10; i++) {
                ch.writeInbound("PING");
                advance(ch, 1000);
            }
            assertEquals(10, drainOutbound(ch).size());
            assertTrue(ch.isActive());
            assertEquals(
                    0.0,
                    registry.get("wheelbeat.heartbeat.ping.strikes").counter().count());
        }

        @Test
        void anEarlyPingIsAStrikeAndStillAnswered() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channelWith(answering()
                    .pingLimits(PingLimits.of(Duration.ofMillis(1000), 3))
                    .metrics(registry));
            ch.writeInbound("PING 1");
            advance(ch, 999);
            ch.writeInbound("PING 2");
            assertEquals(List.of("PONG 1", "PONG 2"), drainOutbound(ch));
            assertEquals(
                    1.0,
                    registry.get("wheelbeat.heartbeat.ping.strikes").counter().count());
            assertTrue(ch.isActive());
        }

        @Test
        void aPingFloodIsAnsweredUntilTheLastStrikeThenClosedWithTooManyPingsEvent() {
            EmbeddedChannel ch = channelWith(answering().pingLimits(PingLimits.of(Duration.ofMillis(1000), 3)));
            ch.writeInbound("PING 1", "PING 2", "PING 3", "PING 4", "PING 5", "PING 6");
            assertFalse(ch.isActive());
            assertEquals(List.of("PONG 1", "PONG 2", "PONG 3"), drainOutbound(ch));
            assertEquals(1, events.all().size());
            assertEquals(3, events.ofType(TooManyPingsEvent.class).get(0).strikes());
            assertTrue(events.activeAt(0), "the event comes before the close");
        }

        @Test
        void releasesThePingsOfAFloodItNoLongerAnswers() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .answerPings(msg -> isText(msg, "PING"), (c, ping) -> "PONG")
                    .pingLimits(PingLimits.of(Duration.ofMillis(1000), 1)));
            List<ByteBuf> flood = List.of(text("PING"), text("PING"), text("PING"), text("PING"));
            ch.writeInbound(flood.toArray());
            assertFalse(ch.isActive());
            assertTrue(flood.stream().allMatch(ping -> ping.refCnt() == 0));
        }

        @Test
        void writesTheGoodbyeBeforeClosingForTooManyPings() {
            EmbeddedChannel ch = channelWith(answering()
                    .pingLimits(PingLimits.of(Duration.ofMillis(1000), 1))
                    .goodbye(c -> "GOAWAY too_many_pings"));
            ch.writeInbound("PING 1", "PING 2");
            assertEquals(List.of("PONG 1", "GOAWAY too_many_pings"), drainOutbound(ch));
            assertFalse(ch.isActive());
        }

        @Test
        void aPingInTimeClearsTheStrikes() {
            EmbeddedChannel ch = channelWith(answering().pingLimits(PingLimits.of(Duration.ofMillis(1000), 3)));
            ch.writeInbound("PING", "PING", "PING"); // two strikes
            advance(ch, 1000);
            ch.writeInbound("PING", "PING", "PING"); // in time, then two strikes again
            assertTrue(ch.isActive());
            ch.writeInbound("PING"); // the third in a row
            assertFalse(ch.isActive());
        }

        @Test
        void withEnforcementTurnedOffAFloodIsAnsweredAndNeverClosed() {
            EmbeddedChannel ch = channelWith(answering().pingLimits(PingLimits.OFF));
            for (int i = 0; i < 1000; i++) {
                ch.writeInbound("PING");
            }
            assertEquals(1000, drainOutbound(ch).size());
            assertTrue(ch.isActive());
        }

        @Test
        void byDefaultAFloodEndsAtItsFourthPingAndPingsEvery100MsAreAllAnswered() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channelWith(answering().metrics(registry));
            for (int i = 0; i < 20; i++) {
                ch.writeInbound("PING");
                advance(ch, 100);
            }
            assertTrue(ch.isActive());
            assertEquals(
                    0.0,
                    registry.get("wheelbeat.heartbeat.ping.strikes").counter().count());
            ch.writeInbound("PING", "PING", "PING", "PING", "PING");
            assertFalse(ch.isActive());
            assertEquals(
                    3.0,
                    registry.get("wheelbeat.heartbeat.ping.strikes").counter().count());
            assertEquals(
                    1.0,
                    registry.get("wheelbeat.connection.closed")
                            .tag("reason", "too_many_pings")
                            .counter()
                            .count());
            assertEquals(23, drainOutbound(ch).size(), "20 pings apart, then the flood's first 3");
        }

        @Test
        void whileUnwritableOnlyTheLatestPingIsAnsweredWhenTheChannelDrains() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .answerPings(
                            msg -> msg instanceof ByteBuf,
                            (c, ping) -> "PONG " + ((ByteBuf) ping).toString(StandardCharsets.US_ASCII))
                    .pingLimits(PingLimits.OFF));
            ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(64, 128));
            ch.write("UNREAD DATA"); // queued, not flushed: one message is about 96 bytes
            ch.write("MORE UNREAD DATA");
            assertFalse(ch.isWritable());
            List<ByteBuf> pings = new ArrayList<>();
            for (int i = 0; i < 10_000; i++) {
                ByteBuf ping = text("PING " + i);
                pings.add(ping);
                ch.writeInbound(ping);
            }
            assertFalse(ch.isWritable(), "no answer queued while the peer reads nothing");
            assertTrue(pings.subList(0, 9_999).stream().allMatch(ping -> ping.refCnt() == 0), "earlier pings released");
            assertEquals(1, pings.get(9_999).refCnt(), "the latest is kept");
            ch.flush(); // the peer reads: the channel drains and becomes writable
            assertEquals(List.of("UNREAD DATA", "MORE UNREAD DATA", "PONG PING 9999"), drainOutbound(ch));
            assertEquals(0, pings.get(9_999).refCnt());
            ch.writeInbound(text("PING next"));
            assertEquals("PONG PING next", ch.readOutbound(), "writable: answered at once");
        }

        @Test
        void aPingKeptWhileUnwritableIsReleasedWhenTheChannelCloses() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .answerPings(msg -> msg instanceof ByteBuf, (c, ping) -> "PONG")
                    .pingLimits(PingLimits.OFF));
            ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1, 2));
            ch.write("UNREAD DATA");
            ByteBuf ping = text("PING");
            ch.writeInbound(ping);
            assertEquals(1, ping.refCnt());
            ch.close();
            assertEquals(0, ping.refCnt());
        }

        @Test
        void aPongFactoryReturningNullIsReportedAndTheConnectionStaysOpen() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder().answerPings("PING"::equals, (c, p) -> null));
            assertThrows(NullPointerException.class, () -> ch.writeInbound("PING"));
            assertNull(ch.readOutbound());
            assertTrue(ch.isActive());
        }

        @Test
        void countsAnswersStrikesAndClosesInMetrics() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channelWith(answering()
                    .pingLimits(PingLimits.of(Duration.ofMillis(1000), 2))
                    .metrics(registry));
            ch.writeInbound("PING", "PING", "PING");
            assertEquals(
                    2.0,
                    registry.get("wheelbeat.heartbeat.pings.answered").counter().count());
            assertEquals(
                    2.0,
                    registry.get("wheelbeat.heartbeat.ping.strikes").counter().count());
            assertEquals(
                    1.0,
                    registry.get("wheelbeat.connection.closed")
                            .tag("reason", "too_many_pings")
                            .counter()
                            .count());
        }

        @Test
        void oneHandlerCanPingAndAnswer() {
            EmbeddedChannel ch = channelWith(HeartbeatHandler.builder()
                    .sendPings(Duration.ofMillis(1000), c -> "PING", "PONG"::equals)
                    .answerPings("PING"::equals, (c, ping) -> "PONG"));
            ch.writeInbound("PING");
            assertEquals("PONG", ch.readOutbound());
            advance(ch, 999);
            assertNull(ch.readOutbound(), "the pong was a write: the interval runs from it");
            advance(ch, 3);
            assertEquals("PING", ch.readOutbound());
        }
    }

    @Nested
    class Settings {

        @Test
        void rejectsNonPositiveIntervalsAndTimeouts() {
            HeartbeatHandler.Builder builder = HeartbeatHandler.builder();
            assertThrows(
                    IllegalArgumentException.class, () -> builder.sendPings(Duration.ofMillis(0), c -> "", x -> true));
            assertThrows(
                    IllegalArgumentException.class, () -> builder.sendPings(Duration.ofMillis(-1), c -> "", x -> true));
            assertThrows(IllegalArgumentException.class, () -> builder.pongTimeout(Duration.ofMillis(0)));
            assertThrows(
                    IllegalArgumentException.class, () -> builder.pingLimits(PingLimits.of(Duration.ofMillis(-5), 3)));
        }

        @Test
        void rejectsNonPositiveCounts() {
            HeartbeatHandler.Builder builder = HeartbeatHandler.builder();
            assertThrows(IllegalArgumentException.class, () -> builder.maxMissedPongs(0));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> builder.pingLimits(PingLimits.of(Duration.ofMillis(100), -1)));
        }

        @Test
        void rejectsJitterOutsideZeroToOne() {
            HeartbeatHandler.Builder builder = HeartbeatHandler.builder();
            assertThrows(IllegalArgumentException.class, () -> builder.pingIntervalJitter(-0.1));
            assertThrows(IllegalArgumentException.class, () -> builder.pingIntervalJitter(1.5));
            assertThrows(IllegalArgumentException.class, () -> builder.pingIntervalJitter(Double.NaN));
        }

        @Test
        void rejectsNullFactoriesMatchersAndUnits() {
            HeartbeatHandler.Builder builder = HeartbeatHandler.builder();
            assertThrows(NullPointerException.class, () -> builder.sendPings(Duration.ofMillis(1), null, x -> true));
            assertThrows(NullPointerException.class, () -> builder.sendPings(Duration.ofMillis(1), c -> "", null));
            assertThrows(NullPointerException.class, () -> builder.sendPings(null, c -> "", x -> true));
            assertThrows(
                    NullPointerException.class,
                    () -> builder.answerPings((java.util.function.Predicate<Object>) null, (c, p) -> ""));
            assertThrows(NullPointerException.class, () -> builder.answerPings(x -> true, null));
            assertThrows(NullPointerException.class, () -> builder.goodbye(null));
            assertThrows(NullPointerException.class, () -> builder.wheels(null));
            assertThrows(NullPointerException.class, () -> builder.random(null));
            assertThrows(NullPointerException.class, () -> builder.metrics(null));
        }

        @Test
        void refusesToBuildWithoutARole() {
            assertThrows(
                    IllegalStateException.class,
                    () -> HeartbeatHandler.builder().build());
        }

        @Test
        void refusesPingOptionsWithoutSendPings() {
            assertThrows(
                    IllegalStateException.class,
                    () -> answering().pongTimeout(Duration.ofMillis(1)).build());
        }

        @Test
        void refusesEnforcementWithoutAnswerPings() {
            assertThrows(
                    IllegalStateException.class,
                    () -> pinging(1000)
                            .pingLimits(PingLimits.of(Duration.ofMillis(1), 3))
                            .build());
        }

        @Test
        void refusesStrikesOrGoodbyeWithEnforcementTurnedOff() {
            // Strikes without a minimum interval: PingLimits.OFF is the only way to turn it off.
            assertThrows(IllegalArgumentException.class, () -> PingLimits.of(Duration.ZERO, 2));
            assertThrows(
                    IllegalStateException.class,
                    () -> answering()
                            .pingLimits(PingLimits.OFF)
                            .goodbye(c -> "bye")
                            .build());
            answering().goodbye(c -> "bye").build(); // the default limits enforce
            assertThrows(
                    IllegalArgumentException.class,
                    () -> answering().pingLimits(PingLimits.of(Duration.ofMillis(-1), 3)));
        }

        @Test
        void pongTimeoutDefaultsToThePingInterval() {
            EmbeddedChannel ch = channelWith(pinging(1000).maxMissedPongs(1));
            advance(ch, 1002);
            advance(ch, 997);
            assertTrue(ch.isActive());
            advance(ch, 4);
            assertFalse(ch.isActive());
        }
    }
}
