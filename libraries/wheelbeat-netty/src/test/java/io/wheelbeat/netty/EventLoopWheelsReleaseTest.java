package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import io.wheelbeat.core.ExecutorDrivenWheel;
import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 21 item 6: a shut-down event loop group whose loop had a timer on its wheel must be
 * collected. The wheel's wake-up future used to hold the loop strongly while the registry keyed
 * the loop weakly, so the loop, its wheel and whatever its timers referenced stayed forever.
 */
class EventLoopWheelsReleaseTest {

    /** A timer that references nothing, so that only the wheel's own references are tested. */
    private static final class Nothing extends io.wheelbeat.core.TimerNode {
        @Override
        protected void expire() {}
    }

    @ParameterizedTest(name = "timer left pending: {0}")
    @ValueSource(booleans = {false, true})
    void aShutDownGroupWhoseLoopHadATimerIsCollected(boolean leavePending) throws InterruptedException {
        EventLoopWheels wheels = new EventLoopWheels(Duration.ofMillis(1), 64);
        WeakReference<EventLoop> loop = loopThatHadATimer(wheels, leavePending);
        assertTrue(collected(loop), "loop collected");
        Reference.reachabilityFence(wheels);
    }

    @Test
    void theSharedWheelsReleaseTheirLoopsToo() throws InterruptedException {
        assertTrue(collected(loopThatHadATimer(EventLoopWheels.shared(), false)), "loop collected");
    }

    private static WeakReference<EventLoop> loopThatHadATimer(EventLoopWheels wheels, boolean leavePending) {
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(1);
        EventLoop loop = group.next();
        ExecutorDrivenWheel wheel = wheels.wheelFor(loop);
        loop.submit(() -> {
                    Nothing timer = new Nothing();
                    wheel.schedule(timer, TimeUnit.SECONDS.toNanos(60));
                    if (!leavePending) {
                        wheel.cancel(timer);
                    }
                })
                .syncUninterruptibly();
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        return new WeakReference<>(loop);
    }

    /** Collects until {@code ref} clears, for up to about 10 s (generous: the machine is shared). */
    private static boolean collected(WeakReference<?> ref) throws InterruptedException {
        for (int i = 0; i < 200 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ref.get() == null;
    }
}
