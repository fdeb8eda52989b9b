package io.wheelbeat.netty.guard;

import static io.wheelbeat.netty.VirtualTime.advance;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.WriteBufferWaterMark;
import io.wheelbeat.netty.SlowDrainChannel;
import io.wheelbeat.netty.UserEvents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlowConsumerHandlerTest {

    /** What Netty's outbound buffer counts for each message beyond its bytes. */
    private static final int PER_MESSAGE = 96;

    private final UserEvents events = new UserEvents();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    /** Water marks 100 / 200 bytes, a cap of 1,000 bytes, unwritable for at most 5 s. */
    private SlowConsumerHandler.Builder small() {
        return SlowConsumerHandler.builder()
                .writeBufferWaterMark(100, 200)
                .maxPendingBytes(1000)
                .unwritableTimeout(Duration.ofMillis(5000))
                .metrics(registry);
    }

    /** A channel in virtual time whose pretend socket takes nothing until told otherwise. */
    private SlowDrainChannel stalledChannel(SlowConsumerHandler.Builder builder) {
        SlowDrainChannel ch = new SlowDrainChannel();
        ch.freezeTime();
        ch.drainBudget(0);
        ch.pipeline().addLast(builder.build().newHandler(), events);
        return ch;
    }

    private static ByteBuf bytes(int n) {
        return Unpooled.buffer(n).writeZero(n);
    }

    private double closedCount() {
        return registry.get("wheelbeat.connection.closed")
                .tag("reason", "slow_consumer")
                .counter()
                .count();
    }

    @Test
    void setsTheWaterMarksWhenItStarts() {
        SlowDrainChannel ch = stalledChannel(small());
        WriteBufferWaterMark marks = ch.config().getWriteBufferWaterMark();
        assertEquals(100, marks.low());
        assertEquals(200, marks.high());
    }

    @Test
    void stopsReadingWhileUnwritableAndReadsAgainWhenWritable() {
        SlowDrainChannel ch = stalledChannel(small());
        ch.writeAndFlush(bytes(300));
        assertFalse(ch.isWritable());
        assertFalse(ch.config().isAutoRead(), "reading paused");
        ch.drainBudget(Long.MAX_VALUE);
        ch.flush();
        assertTrue(ch.isWritable(), "drained");
        assertTrue(ch.config().isAutoRead(), "reading again");
        assertEquals(
                1.0,
                registry.get("wheelbeat.slow.consumer.read.pauses").counter().count());
        assertTrue(ch.isActive());
    }

    @Test
    void leavesReadingOffIfItWasOffBeforeTheChannelTurnedUnwritable() {
        SlowDrainChannel ch = stalledChannel(small());
        ch.config().setAutoRead(false); // someone else's back-pressure
        ch.writeAndFlush(bytes(300));
        ch.drainBudget(Long.MAX_VALUE);
        ch.flush();
        assertTrue(ch.isWritable());
        assertFalse(ch.config().isAutoRead());
    }

    @Test
    void aWriteThatLeavesMoreThanTheCapPendingEndsTheConnection() {
        SlowDrainChannel ch = stalledChannel(small());
        ch.writeAndFlush(bytes(600));
        assertTrue(ch.isActive(), "600 bytes pending: unwritable, under the cap");
        ByteBuf overTheCap = bytes(500);
        ch.writeAndFlush(overTheCap);
        assertFalse(ch.isActive());
        SlowConsumerEvent event = events.ofType(SlowConsumerEvent.class).get(0);
        assertEquals(SlowConsumerEvent.Cause.PENDING_BYTES, event.cause());
        assertEquals(600 + 500 + 2 * PER_MESSAGE, event.pendingBytes());
        assertTrue(events.activeAt(0), "the event comes before the close");
        assertEquals(0, overTheCap.refCnt(), "closing released what was pending");
        assertEquals(1.0, closedCount());
    }

    @Test
    void writesUpToTheCapAreKept() {
        SlowDrainChannel ch = stalledChannel(small());
        ch.write(bytes(1000 - PER_MESSAGE));
        assertEquals(1000, ch.unsafe().outboundBuffer().totalPendingWriteBytes());
        assertTrue(ch.isActive(), "exactly 1,000 bytes pending is allowed");
        ch.write(bytes(1));
        assertFalse(ch.isActive());
    }

    @Test
    void aChannelUnwritableLongerThanTheTimeoutIsEndedThenAndNotBefore() {
        SlowDrainChannel ch = stalledChannel(small());
        ch.writeAndFlush(bytes(300));
        advance(ch, 4999);
        assertTrue(ch.isActive());
        advance(ch, 3);
        assertFalse(ch.isActive());
        SlowConsumerEvent event = events.ofType(SlowConsumerEvent.class).get(0);
        assertEquals(SlowConsumerEvent.Cause.UNWRITABLE_TOO_LONG, event.cause());
        assertEquals(300 + PER_MESSAGE, event.pendingBytes());
        assertEquals(1.0, closedCount());
        assertEquals(0, pendingTimers(ch));
    }

    @Test
    void eachUnwritableSpellHasItsOwnDeadline() {
        SlowDrainChannel ch = stalledChannel(small());
        List<Boolean> activeAfterSpells = new ArrayList<>();
        for (int spell = 0; spell < 3; spell++) {
            ch.drainBudget(0);
            ch.writeAndFlush(bytes(300));
            advance(ch, 4000);
            ch.drainBudget(Long.MAX_VALUE);
            ch.flush(); // drained: writable again
            advance(ch, 2000);
            activeAfterSpells.add(ch.isActive());
        }
        assertEquals(List.of(true, true, true), activeAfterSpells);
        assertEquals(0, pendingTimers(ch));
    }

    /**
     * Unwritable, the channel leaves its loop ({@code deregister()}); it drains while on no loop
     * and comes back ({@code register}, here to the same EmbeddedChannel loop, as a move to another
     * loop does): reading resumes and the deadline of the unwritable spell is gone.
     */
    @Test
    void aChannelThatDrainsWhileMovingToAnotherLoopReadsAgainAndIsNotEnded() throws Exception {
        SlowDrainChannel ch = stalledChannel(small());
        ch.writeAndFlush(bytes(300));
        advance(ch, 1000);
        ch.deregister();
        ch.runPendingTasks();
        ch.drainBudget(Long.MAX_VALUE);
        ch.flush(); // the socket takes the bytes while the channel is on no loop
        assertTrue(ch.isWritable());
        ch.register();
        ch.runPendingTasks();
        assertTrue(ch.config().isAutoRead(), "reading again");
        advance(ch, 6000);
        assertTrue(ch.isActive(), "writable: not ended for the unwritable spell before the move");
        assertEquals(List.of(), events.ofType(SlowConsumerEvent.class));
        assertEquals(0, pendingTimers(ch));
    }

    @Test
    void closingCancelsTheDeadline() {
        SlowDrainChannel ch = stalledChannel(small());
        ch.writeAndFlush(bytes(300));
        assertEquals(1, pendingTimers(ch));
        ch.close();
        assertEquals(0, pendingTimers(ch));
        assertTrue(events.ofType(SlowConsumerEvent.class).isEmpty());
    }

    @Test
    void withoutPausingItLeavesAutoReadAlone() {
        SlowDrainChannel ch = stalledChannel(small().pauseReadingWhileUnwritable(false));
        ch.writeAndFlush(bytes(300));
        assertFalse(ch.isWritable());
        assertTrue(ch.config().isAutoRead());
    }

    @Test
    void rejectsSettingsOutOfRange() {
        SlowConsumerHandler.Builder builder = SlowConsumerHandler.builder();
        assertThrows(IllegalArgumentException.class, () -> builder.maxPendingBytes(0));
        assertThrows(IllegalArgumentException.class, () -> builder.unwritableTimeout(Duration.ofMillis(0)));
        assertThrows(IllegalArgumentException.class, () -> builder.writeBufferWaterMark(300, 200));
        assertThrows(IllegalArgumentException.class, () -> builder.writeBufferWaterMark(-1, 200));
        assertThrows(NullPointerException.class, () -> builder.unwritableTimeout(null));
        assertThrows(
                IllegalStateException.class,
                () -> SlowConsumerHandler.builder()
                        .writeBufferWaterMark(100, 2000)
                        .maxPendingBytes(2000)
                        .build());
    }
}
