package io.wheelbeat.netty;

import static io.wheelbeat.netty.VirtualTime.advance;
import static io.wheelbeat.netty.VirtualTime.frozenChannel;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.WriteTimeoutException;
import io.netty.util.AttributeKey;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.FirstMessageTimeoutEvent;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.deadline.MaxConnectionAgeEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import io.wheelbeat.netty.idle.WheelWriteTimeoutHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A channel that leaves its event loop while active and is registered again (here with the same
 * EmbeddedChannel loop, in virtual time): the handlers stop when it leaves, start again when it is
 * back, and their timers keep the deadlines they had. The real move between two loops is
 * {@link LoopMove}'s.
 */
class MovedChannelTimersTest {

    /** Deregisters {@code ch} and registers it again, as a move to another loop does. */
    private static void leave(EmbeddedChannel ch) {
        ch.deregister();
        ch.runPendingTasks();
        assertFalse(ch.isRegistered());
        assertTrue(ch.isActive());
    }

    private static void comeBack(EmbeddedChannel ch) throws Exception {
        ch.register();
        ch.runPendingTasks();
        assertTrue(ch.isRegistered());
    }

    /** Arms two timers at the start; a read cancels the second, as a first-message timeout. */
    static final class TwoTimers extends ChannelTimerHandler {
        final List<String> calls = new ArrayList<>();
        final TimerNode age = new TimerNode() {
            @Override
            protected void expire() {
                calls.add("age");
            }
        };
        final TimerNode firstMessage = new TimerNode() {
            @Override
            protected void expire() {
                calls.add("firstMessage");
            }
        };

        TwoTimers() {
            super(EventLoopWheels.shared());
        }

        @Override
        protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
            calls.add(running() ? "start" : "start, not running");
            schedule(age, TimeUnit.SECONDS.toNanos(1));
            schedule(firstMessage, TimeUnit.SECONDS.toNanos(2));
        }

        @Override
        protected void onStop() {
            calls.add(running() ? "stop, running" : "stop");
            cancel(age);
            cancel(firstMessage);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            cancel(firstMessage);
        }
    }

    @Test
    void pendingTimersKeepTheirDeadlinesAndCancelledOnesStayCancelled() throws Exception {
        TwoTimers handler = new TwoTimers();
        EmbeddedChannel ch = frozenChannel(handler);
        ch.writeInbound("first message");
        advance(ch, 600);
        leave(ch);
        assertEquals(List.of("start", "stop"), handler.calls);
        assertFalse(handler.age.isPending());
        assertEquals(0, pendingTimers(ch), "nothing left on the wheel of the loop it left");

        comeBack(ch);
        assertEquals(List.of("start", "stop", "start"), handler.calls);
        assertTrue(handler.age.isPending());
        assertFalse(handler.firstMessage.isPending(), "cancelled before the move, it stays so");
        advance(ch, 395);
        assertEquals(List.of("start", "stop", "start"), handler.calls, "the age counts from the first start");
        advance(ch, 10);
        assertEquals(List.of("start", "stop", "start", "age"), handler.calls);
        advance(ch, 3000);
        assertEquals(List.of("start", "stop", "start", "age"), handler.calls);
        ch.close();
        assertEquals(List.of("start", "stop", "start", "age", "stop"), handler.calls);
    }

    @Test
    void aTimerCancelledWhileAwayStaysCancelledOnTheNewLoop() throws Exception {
        TwoTimers handler = new TwoTimers();
        EmbeddedChannel ch = frozenChannel(handler);
        advance(ch, 600);
        leave(ch);
        ch.writeInbound("first message"); // a read while on no loop cancels the first-message timer
        comeBack(ch);
        assertTrue(handler.age.isPending());
        assertFalse(handler.firstMessage.isPending(), "cancelled while away, it stays so");
        advance(ch, 3000);
        assertEquals(List.of("start", "stop", "start", "age"), handler.calls);
    }

    @Test
    void removedOrClosedWhileAwayItNeverStartsAgain() throws Exception {
        TwoTimers handler = new TwoTimers();
        EmbeddedChannel ch = frozenChannel(handler);
        leave(ch);
        ch.pipeline().remove(handler);
        comeBack(ch);
        advance(ch, 3000);
        assertEquals(List.of("start", "stop"), handler.calls, "onStop ran once, when the channel left");
        assertEquals(0, pendingTimers(ch));
        assertNull(ch.attr(AttributeKey.valueOf(ChannelTimerHandler.class, "movingTimers"))
                .get());
    }

    @Test
    void idleEventComesAtNettysMomentAfterAMove() throws Exception {
        UserEvents events = new UserEvents();
        EmbeddedChannel ch = frozenChannel(new WheelIdleStateHandler(1000, 0, 0, TimeUnit.MILLISECONDS), events);
        advance(ch, 600);
        leave(ch);
        assertEquals(0, pendingTimers(ch));
        comeBack(ch);
        advance(ch, 395);
        assertEquals(List.of(), events.all(), "idle counts from the last read, not from the move");
        advance(ch, 10);
        assertEquals(List.of(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT), events.all());
        ch.writeInbound("read");
        advance(ch, 995);
        assertEquals(1, events.all().size());
        advance(ch, 10);
        assertEquals(2, events.all().size());
    }

    @Test
    void connectionDeadlinesCountOnAcrossAMove() throws Exception {
        UserEvents events = new UserEvents();
        EmbeddedChannel ch = frozenChannel(
                ConnectionDeadlineHandler.builder()
                        .firstMessageTimeout(Duration.ofMillis(500))
                        .maxConnectionAge(
                                MaxConnectionAge.of(Duration.ofMillis(1000)).withJitter(0))
                        .build()
                        .newHandler(),
                events);
        ch.writeInbound("first message");
        advance(ch, 600);
        leave(ch);
        comeBack(ch);
        advance(ch, 395);
        assertTrue(ch.isActive());
        assertEquals(List.of(), events.all());
        advance(ch, 10);
        assertEquals(1, events.ofType(MaxConnectionAgeEvent.class).size());
        assertEquals(List.of(), events.ofType(FirstMessageTimeoutEvent.class));
    }

    @Test
    void aJitteredAgeIsDrawnOnceAndReportedAsServed() throws Exception {
        long[] reportedAndServed = new long[2];
        EmbeddedChannel ch = frozenChannel();
        long start = VirtualTime.now(ch);
        ch.pipeline()
                .addLast(
                        ConnectionDeadlineHandler.builder()
                                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(1000))
                                        .withJitter(0.5))
                                .build()
                                .newHandler(),
                        new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                if (evt instanceof MaxConnectionAgeEvent age) {
                                    reportedAndServed[0] = age.ageNanos();
                                    reportedAndServed[1] = VirtualTime.now(ctx.channel()) - start;
                                }
                            }
                        });
        advance(ch, 400);
        leave(ch);
        comeBack(ch);
        advance(ch, 1200);
        assertTrue(reportedAndServed[0] > 0, "no MaxConnectionAgeEvent");
        long apart = Math.abs(reportedAndServed[1] - reportedAndServed[0]);
        assertTrue(
                apart < TimeUnit.MILLISECONDS.toNanos(3),
                () -> "age reported " + reportedAndServed[0] + " ns, served " + reportedAndServed[1] + " ns");
    }

    @Test
    void aPendingWriteTimesOutAtItsDeadlineAcrossAMove() throws Exception {
        EmbeddedChannel ch = frozenChannel(new WheelWriteTimeoutHandler(1000, TimeUnit.MILLISECONDS));
        ch.write("unflushed");
        advance(ch, 600);
        leave(ch);
        assertEquals(0, pendingTimers(ch));
        comeBack(ch);
        advance(ch, 395);
        assertTrue(ch.isActive());
        advance(ch, 10);
        assertFalse(ch.isActive(), "timed out 1000 ms after it was written");
        assertThrows(WriteTimeoutException.class, ch::checkException);
    }

    @Test
    void heartbeatPingsOnItsScheduleAcrossAMove() throws Exception {
        EmbeddedChannel ch = frozenChannel(HeartbeatHandler.builder()
                .sendPings(Duration.ofMillis(1000), channel -> "PING", "PONG"::equals)
                .build()
                .newHandler());
        advance(ch, 600);
        leave(ch);
        assertEquals(0, pendingTimers(ch));
        comeBack(ch);
        advance(ch, 395);
        assertNull(ch.readOutbound());
        advance(ch, 10);
        assertEquals("PING", ch.readOutbound());
        ch.writeInbound("PONG");
        advance(ch, 1000);
        assertEquals("PING", ch.readOutbound(), "the pong came: pinging goes on");
        ch.finishAndReleaseAll();
    }

    /** A channel whose answering heartbeat owes the peer a pong: the ping came while it was not writable. */
    private static EmbeddedChannel owingAPong(ByteBuf ping) {
        EmbeddedChannel ch = frozenChannel(HeartbeatHandler.builder()
                .answerPings(msg -> msg instanceof ByteBuf, (c, p) -> "PONG " + ((ByteBuf) p).toString(US_ASCII))
                .pingLimits(PingLimits.OFF)
                .build()
                .newHandler());
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1, 2));
        ch.write("UNREAD DATA"); // queued, not flushed: the peer reads nothing
        assertFalse(ch.isWritable());
        ch.writeInbound(ping);
        assertEquals(1, ping.refCnt(), "kept until the channel is writable");
        return ch;
    }

    @Test
    void aPongOwedBeforeAMoveIsSentWhenTheChannelDrainsOnTheNewLoop() throws Exception {
        ByteBuf ping = Unpooled.copiedBuffer("PING 1", US_ASCII);
        EmbeddedChannel ch = owingAPong(ping);
        leave(ch);
        assertEquals(1, ping.refCnt(), "still owed while the channel moves");
        comeBack(ch);
        ch.flush(); // the peer reads: the channel drains and becomes writable
        assertEquals("UNREAD DATA", ch.readOutbound());
        assertEquals("PONG PING 1", ch.readOutbound());
        assertEquals(0, ping.refCnt());
        ch.close();
        assertEquals(0, ping.refCnt());
    }

    @Test
    void aPongOwedWhenTheChannelClosesOrTheHandlerGoesWhileAwayIsReleasedOnce() throws Exception {
        ByteBuf closedAway = Unpooled.copiedBuffer("PING 2", US_ASCII);
        EmbeddedChannel ch = owingAPong(closedAway);
        leave(ch);
        ch.close(); // no channelInactive, no handlerRemoved: the channel is on no loop
        assertEquals(0, closedAway.refCnt(), "released when the channel closed away from any loop");

        ByteBuf removedAway = Unpooled.copiedBuffer("PING 3", US_ASCII);
        EmbeddedChannel other = owingAPong(removedAway);
        leave(other);
        other.pipeline().remove(HeartbeatHandler.class); // Netty calls handlerRemoved once registered again
        comeBack(other);
        assertEquals(0, removedAway.refCnt(), "released when the handler was removed");
        other.close(); // nothing is released twice: that would throw IllegalReferenceCountException
        assertNull(other.readOutbound(), "no pong from a removed handler");
    }
}
