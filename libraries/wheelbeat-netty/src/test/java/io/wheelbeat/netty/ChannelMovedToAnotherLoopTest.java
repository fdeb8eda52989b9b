package io.wheelbeat.netty;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link LoopMove} on Netty's NIO loops (4.2's IoHandler group, or 4.1's NioEventLoopGroup), wheels beside them. */
class ChannelMovedToAnotherLoopTest {

    @Test
    void timersFollowAnActiveChannelToItsNewLoop() throws Exception {
        new LoopMove(NettyLine.nio(2), new EventLoopWheels(Duration.ofMillis(1), 512)).moveActiveChannelThenGoSilent();
    }
}
