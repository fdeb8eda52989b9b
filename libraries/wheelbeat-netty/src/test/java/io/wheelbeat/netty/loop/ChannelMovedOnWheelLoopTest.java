package io.wheelbeat.netty.loop;

import io.netty.channel.nio.NioIoHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.LoopMove;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link LoopMove} between two loops of a {@link WheelIoEventLoopGroup}: the timers are on each loop's own wheel. */
class ChannelMovedOnWheelLoopTest {

    @Test
    void timersFollowAnActiveChannelToItsNewLoop() throws Exception {
        new LoopMove(
                        new WheelIoEventLoopGroup(2, NioIoHandler.newFactory()),
                        new EventLoopWheels(Duration.ofMillis(1), 512))
                .moveActiveChannelThenGoSilent();
    }
}
