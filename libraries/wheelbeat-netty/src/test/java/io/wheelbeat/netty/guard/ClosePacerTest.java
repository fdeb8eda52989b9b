package io.wheelbeat.netty.guard;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.netty.VirtualTicker;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The pacer in virtual time: many EmbeddedChannels, each on its own event loop, all reading one
 * shared clock, so that one rate spreads closes made on many loops.
 */
class ClosePacerTest {

    /** A clock shared by every channel of a test. */
    private final VirtualTicker ticker = new VirtualTicker(0);

    private final List<EmbeddedChannel> channels = new ArrayList<>();
    /** Close times, in milliseconds since the start of the clock, in the order of the closes. */
    private final List<Long> closedAtMillis = new ArrayList<>();

    private EmbeddedChannel newChannel() {
        EmbeddedChannel ch = EmbeddedChannel.builder().ticker(ticker).build();
        ch.closeFuture()
                .addListener(f -> closedAtMillis.add((ticker.nanoTime() - ticker.initialNanoTime()) / 1_000_000));
        channels.add(ch);
        return ch;
    }

    private List<EmbeddedChannel> newChannels(int n) {
        List<EmbeddedChannel> made = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            made.add(newChannel());
        }
        return made;
    }

    /** Moves the shared clock 1 ms at a time, running every channel's due tasks at each step. */
    private void advance(long millis) {
        for (long i = 0; i < millis; i++) {
            ticker.advance(MILLISECONDS.toNanos(1));
            for (EmbeddedChannel ch : channels) {
                ch.runPendingTasks();
            }
        }
    }

    /** The most closes in any window of {@code windowMillis}. */
    private int busiestWindow(long windowMillis) {
        List<Long> sorted = closedAtMillis.stream().sorted().toList();
        int most = 0;
        for (int start = 0, end = 0; start < sorted.size(); start++) {
            while (end < sorted.size() && sorted.get(end) - sorted.get(start) < windowMillis) {
                end++;
            }
            most = Math.max(most, end - start);
        }
        return most;
    }

    @Test
    void aCloseWithNoneWaitingHappensAtOnceAfterItsGoodbye() {
        ClosePacer pacer = ClosePacer.builder(10, Duration.ofMillis(100)).build();
        EmbeddedChannel ch = newChannel();
        pacer.close(ch, "bye");
        assertFalse(ch.isActive());
        assertEquals("bye", ch.readOutbound());
    }

    @Test
    void aBurstOnManyEventLoopsIsSpreadAtOneSharedRate() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ClosePacer pacer =
                ClosePacer.builder(10, Duration.ofMillis(100)).metrics(registry).build();
        List<EmbeddedChannel> burst = newChannels(100);
        for (EmbeddedChannel ch : burst) {
            pacer.close(ch, null);
        }
        assertEquals(1, closedAtMillis.size(), "the first slot is now");
        assertEquals(99, pacer.waiting());
        assertEquals(
                99.0,
                registry.get("wheelbeat.connection.closes.waiting").gauge().value());
        advance(1_100);
        assertEquals(100, closedAtMillis.size());
        for (int k = 0; k < 100; k++) {
            long at = closedAtMillis.get(k);
            // The k-th close at its slot, k x 10 ms, fired by the wheel within a tick or two.
            assertTrue(at >= 10L * k && at <= 10L * k + 3, "close " + k + " at " + at + " ms");
        }
        assertTrue(busiestWindow(100) <= 11, "busiest 100 ms: " + busiestWindow(100) + " (10, +1 for the tick)");
        assertEquals(0, pacer.waiting());
        assertEquals(
                99.0,
                registry.get("wheelbeat.connection.closes.paced").counter().count());
    }

    @Test
    void aChannelGetsOnePacedCloseHoweverOftenItIsAsked() {
        ClosePacer pacer = ClosePacer.builder(10, Duration.ofMillis(100)).build();
        EmbeddedChannel busy = newChannel();
        EmbeddedChannel repeated = newChannel();
        EmbeddedChannel next = newChannel();
        ByteBuf secondGoodbye = Unpooled.copiedBuffer(new byte[] {4});
        assertTrue(pacer.close(busy, null)); // slot 0
        assertTrue(pacer.close(repeated, "bye")); // slot 10 ms
        assertFalse(pacer.close(repeated, secondGoodbye), "asked again while it waits");
        assertEquals(0, secondGoodbye.refCnt());
        pacer.close(next, null); // slot 20 ms: the repeat took no slot
        advance(25);
        assertEquals(
                List.of(0L, 10L, 20L),
                closedAtMillis.stream().map(t -> t / 10 * 10).toList());
        assertEquals("bye", repeated.readOutbound());
        assertNull(repeated.readOutbound());
    }

    @Test
    void closesLaterThanTheBacklogWaitOnlyForIt() {
        ClosePacer pacer = ClosePacer.builder(10, Duration.ofMillis(100)).build();
        List<EmbeddedChannel> some = newChannels(3);
        some.forEach(ch -> pacer.close(ch, null)); // slots 0, 10, 20 ms
        advance(500);
        pacer.close(newChannel(), null); // the backlog is long gone: at once
        assertEquals(
                List.of(0L, 10L, 20L, 500L),
                closedAtMillis.stream().map(t -> t / 10 * 10).toList());
    }

    @Test
    void aChannelThatClosesWhileWaitingIsLeftAloneAndItsGoodbyeReleased() {
        ClosePacer pacer = ClosePacer.builder(1, Duration.ofSeconds(1)).build();
        EmbeddedChannel first = newChannel();
        EmbeddedChannel second = newChannel();
        ByteBuf goodbye = Unpooled.copiedBuffer(new byte[] {4});
        pacer.close(first, null);
        pacer.close(second, goodbye);
        second.close(); // the peer went away meanwhile
        assertEquals(0, goodbye.refCnt());
        assertEquals(0, VirtualTime.pendingTimers(second), "its timer is gone");
        advance(1_100);
        assertNull(second.readOutbound());
        assertEquals(0, pacer.waiting());
    }

    @Test
    void closeAllOverSpreadsTheClosesEvenlyOverTheWindowEachAfterItsGoodbye() {
        ClosePacer pacer = ClosePacer.builder(1, Duration.ofHours(1)).build(); // the rate does not apply
        List<EmbeddedChannel> all = newChannels(10);
        CompletableFuture<Void> done = pacer.closeAllOver(all, Duration.ofSeconds(1), ch -> "bye " + all.indexOf(ch));
        advance(2); // a timer due now fires on the next tick
        assertEquals(1, closedAtMillis.size());
        advance(1_000);
        assertTrue(done.isDone());
        for (int i = 0; i < 10; i++) {
            long at = closedAtMillis.get(i);
            assertTrue(at >= 100L * i && at <= 100L * i + 3, "close " + i + " at " + at + " ms");
            assertEquals("bye " + i, all.get(i).readOutbound());
        }
    }

    @Test
    void closeAllOverWithAGoodbyeFactoryThatThrowsStillCloses() {
        ClosePacer pacer = ClosePacer.builder(1, Duration.ofSeconds(1)).build();
        List<EmbeddedChannel> all = newChannels(2);
        CompletableFuture<Void> done = pacer.closeAllOver(all, Duration.ZERO, ch -> {
            throw new IllegalStateException("no goodbye");
        });
        advance(2);
        assertTrue(done.isDone());
        assertTrue(all.stream().noneMatch(EmbeddedChannel::isActive));
    }

    @Test
    void rejectsARateThatIsNotPositive() {
        assertThrows(IllegalArgumentException.class, () -> ClosePacer.builder(0, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> ClosePacer.builder(1, Duration.ZERO));
        assertThrows(NullPointerException.class, () -> ClosePacer.builder(1, null));
        ClosePacer pacer = ClosePacer.builder(1, Duration.ofSeconds(1)).build();
        assertThrows(
                IllegalArgumentException.class, () -> pacer.closeAllOver(List.of(), Duration.ofMillis(-1), ch -> null));
    }
}
