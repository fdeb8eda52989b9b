package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.core.ExecutorDrivenWheel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventLoopWheelsTest {

    @Test
    void badSettingsFailWhenTheWheelsAreMadeNotOnSomeChannelsFirstTimer() {
        assertThrows(IllegalArgumentException.class, () -> new EventLoopWheels(Duration.ofNanos(10), 4096));
        assertThrows(IllegalArgumentException.class, () -> new EventLoopWheels(Duration.ofMinutes(5), 4096));
        assertThrows(IllegalArgumentException.class, () -> new EventLoopWheels(Duration.ofMillis(1), 32));
        assertThrows(NullPointerException.class, () -> new EventLoopWheels(null, 4096));
    }

    @Test
    void eachLoopHasOneWheelAnnouncedOnce() {
        EventLoopWheels wheels = new EventLoopWheels(Duration.ofMillis(1), 64);
        List<ExecutorDrivenWheel> announced = new ArrayList<>();
        wheels.onNewWheel((loop, wheel) -> announced.add(wheel));
        EmbeddedChannel one = new EmbeddedChannel();
        EmbeddedChannel two = new EmbeddedChannel();
        ExecutorDrivenWheel first = wheels.wheelFor(one.eventLoop());
        assertSame(first, wheels.wheelFor(one.eventLoop()));
        assertNotSame(first, wheels.wheelFor(two.eventLoop()));
        assertEquals(2, announced.size());
        one.finishAndReleaseAll();
        two.finishAndReleaseAll();
    }
}
