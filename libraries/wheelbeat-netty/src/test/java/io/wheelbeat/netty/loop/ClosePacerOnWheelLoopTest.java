package io.wheelbeat.netty.loop;

import io.netty.channel.nio.NioIoHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.guard.PacedCloseMove;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link PacedCloseMove} between two loops of a {@link WheelIoEventLoopGroup}: the pacer's timers
 * on each loop's own wheel.
 */
class ClosePacerOnWheelLoopTest {

    @Test
    void aWaitingCloseFollowsItsChannelToItsNewLoop() throws Exception {
        new PacedCloseMove(
                        new WheelIoEventLoopGroup(2, NioIoHandler.newFactory()),
                        new EventLoopWheels(Duration.ofMillis(1), 512))
                .run();
    }
}
