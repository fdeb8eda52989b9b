package io.wheelbeat.netty.guard;

import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.NettyLine;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link PacedCloseMove} on Netty's NIO loops (4.2's IoHandler group, or 4.1's NioEventLoopGroup),
 * wheels beside them.
 */
class ClosePacerMoveTest {

    @Test
    void aWaitingCloseFollowsItsChannelToItsNewLoop() throws Exception {
        new PacedCloseMove(NettyLine.nio(2), new EventLoopWheels(Duration.ofMillis(1), 512)).run();
    }
}
