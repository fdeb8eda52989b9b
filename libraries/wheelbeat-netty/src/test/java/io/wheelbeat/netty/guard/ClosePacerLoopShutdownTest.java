package io.wheelbeat.netty.guard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalChannel;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Paced closes whose event loop refuses the task ({@code execute} throws
 * RejectedExecutionException: the loop shut down), on Netty's {@code DefaultEventLoop}s with
 * LocalChannels (no sockets). The order of the steps follows from the loops' task queues; waits
 * (10 s at most) only end a failing run.
 */
class ClosePacerLoopShutdownTest {

    private static final long WAIT_S = 10;

    private final DefaultEventLoop loopA = new DefaultEventLoop();
    private final DefaultEventLoop loopB = new DefaultEventLoop();
    private final EventLoopWheels wheels = new EventLoopWheels(Duration.ofMillis(1), 64);

    @AfterEach
    void shutDown() throws InterruptedException {
        loopA.shutdownGracefully(0, 0, SECONDS).await(WAIT_S, SECONDS);
        loopB.shutdownGracefully(0, 0, SECONDS).await(WAIT_S, SECONDS);
    }

    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    private static Channel registeredOn(EventLoop loop) throws InterruptedException {
        Channel ch = new LocalChannel();
        assertTrue(loop.register(ch).await(WAIT_S, SECONDS), "register");
        return ch;
    }

    private static void terminate(EventLoop loop) throws InterruptedException {
        assertTrue(loop.shutdownGracefully(0, 0, SECONDS).await(WAIT_S, SECONDS), "loop terminated");
    }

    private static void waitFor(BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + SECONDS.toNanos(WAIT_S);
        while (!condition.getAsBoolean() && System.nanoTime() - until < 0) {
            Thread.sleep(5);
        }
    }

    /** A pacer whose second close waits an hour: the first slot is now. */
    private ClosePacer onePerHour() {
        return ClosePacer.builder(1, Duration.ofHours(1)).wheels(wheels).build();
    }

    private long failedCallbacks(EventLoop loop) throws Exception {
        return loop.submit(wheels.wheelFor(loop)::failedCount).get(WAIT_S, SECONDS);
    }

    @Test
    void aCloseAskedOnALoopThatRefusesReleasesTheGoodbyeAndDoesNotThrow() throws Exception {
        ClosePacer pacer = onePerHour();
        Channel ch = registeredOn(loopA);
        terminate(loopA);
        ByteBuf goodbye = Unpooled.copiedBuffer(new byte[] {1});
        assertTrue(assertDoesNotThrow(() -> pacer.close(ch, goodbye)));
        assertEquals(0, goodbye.refCnt(), "the goodbye is released, never written");
        assertEquals(0, pacer.waiting());
    }

    @Test
    void closeAllOverGivesUpAChannelWhoseLoopRefusesAndClosesTheRest() throws Exception {
        ClosePacer pacer = ClosePacer.builder(1, Duration.ofHours(1)).build();
        Channel refused = registeredOn(loopA);
        terminate(loopA);
        EmbeddedChannel open = new EmbeddedChannel();
        open.freezeTime();
        AtomicInteger goodbyes = new AtomicInteger();
        CompletableFuture<Void> done = assertDoesNotThrow(() ->
                pacer.closeAllOver(List.of(refused, open), Duration.ZERO, c -> "bye " + goodbyes.incrementAndGet()));
        open.runPendingTasks();
        VirtualTime.advance(open, 2); // a timer due now fires on the next tick
        assertFalse(open.isActive(), "the channel after the refused one is closed");
        assertEquals("bye 1", open.readOutbound(), "one goodbye: made on the open channel's loop only");
        assertTrue(done.isDone(), "the refused channel is not waited for");
    }

    /**
     * The close waits an hour on the wheel of loop A; the channel moves to loop B, A shuts down,
     * then the channel closes on B: the wait is settled though A refuses to cancel it.
     */
    @Test
    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    void aWaitingCloseWhoseLoopShutDownIsReleasedWhenItsMovedChannelCloses() throws Exception {
        ClosePacer pacer = onePerHour();
        Channel first = registeredOn(loopA);
        Channel moved = registeredOn(loopA);
        ByteBuf goodbye = Unpooled.copiedBuffer(new byte[] {2});
        assertTrue(pacer.close(first, null));
        assertTrue(pacer.close(moved, goodbye));
        waitFor(() -> pacer.waiting() == 1);
        assertEquals(1, pacer.waiting(), "the second close waits for its slot");
        assertTrue(moved.deregister().await(WAIT_S, SECONDS), "deregister");
        assertTrue(loopB.register(moved).await(WAIT_S, SECONDS), "register on loop B");
        terminate(loopA);

        assertTrue(moved.close().await(WAIT_S, SECONDS));
        assertEquals(0, pacer.waiting(), "the close no longer waits");
        assertEquals(0, goodbye.refCnt(), "the goodbye is released");
    }

    /**
     * closeAllOver's close falls due on loop A's wheel after its channel moved to loop B and B shut
     * down, closing it (loop A is held busy meanwhile, so the order does not depend on speed; the
     * due timer's turn is queued on A before the close's cancel): no goodbye is made, the timer
     * does not fail, and the future completes.
     */
    @Test
    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    void aSlotFallingDueAfterItsChannelMovedToALoopThatShutDownGivesUp() throws Exception {
        ClosePacer pacer = onePerHour();
        Channel moved = registeredOn(loopA);
        CountDownLatch loopBGone = new CountDownLatch(1);
        AtomicInteger goodbyes = new AtomicInteger();
        CompletableFuture<CompletableFuture<Void>> asked = new CompletableFuture<>();
        CompletableFuture<Void> deregistered = new CompletableFuture<>();
        loopA.execute(() -> {
            asked.complete(pacer.closeAllOver(List.of(moved), Duration.ZERO, c -> {
                goodbyes.incrementAndGet();
                return Unpooled.copiedBuffer(new byte[] {3});
            }));
            moved.deregister().addListener(f -> deregistered.complete(null));
            loopA.execute(
                    () -> { // A's wheel fires no timer before loop B is gone
                        try {
                            loopBGone.await(WAIT_S, SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
        });
        CompletableFuture<Void> done = asked.get(WAIT_S, SECONDS);
        deregistered.get(WAIT_S, SECONDS);
        assertTrue(loopB.register(moved).await(WAIT_S, SECONDS), "register on loop B");
        terminate(loopB);
        loopBGone.countDown();

        waitFor(done::isDone);
        assertTrue(done.isDone(), "the close given up is not waited for");
        assertEquals(0, goodbyes.get(), "no goodbye made for a loop that refuses it");
        assertEquals(0, failedCallbacks(loopA), "timer callbacks that threw");
    }
}
