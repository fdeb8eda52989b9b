package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.wheelbeat.core.TimerNode;
import org.junit.jupiter.api.Test;
import org.openjdk.jol.vm.VM;

/**
 * A pending one-shot task is one 40-byte object (compressed references): the node (header, links,
 * deadline, int order: 32 B), the loop and the state; the task keeps its deadline in the node.
 * A periodic one adds its period (56 B).
 */
class WheelScheduledTaskFootprintTest {

    /** A node with no field of its own (static: no outer reference). */
    private static final class Bare extends TimerNode {
        @Override
        protected void expire() {}
    }

    @Test
    void aOneShotTaskIsFortyBytesAndItsNodeThirtyTwo() {
        assumeTrue(
                VM.current().objectHeaderSize() == 12 && VM.current().sizeOfField("oop") == 4,
                "compressed references and 12-byte headers (JDK 17's default heap)");
        assertEquals(32, VM.current().sizeOf(new Bare()));
        assertEquals(40, VM.current().sizeOf(new WheelScheduledTask<Void>(null, (Runnable) () -> {}, 0)));
        assertEquals(56, VM.current().sizeOf(new WheelScheduledTask.Periodic(null, () -> {}, 0, 1)));
    }
}
