package io.wheelbeat.demo.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Gauge;
import io.wheelbeat.demo.protocol.FrameType;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The allocator meters watch the allocator the connections really use (Netty 4.2's adaptive
 * one), not {@code PooledByteBufAllocator.DEFAULT}, which no channel touches and which read 0
 * while the server ran out of direct memory.
 */
class DemoServerAllocatorMetricsTest {

    private DemoServer.Running server;

    @BeforeEach
    void startServer() {
        DemoServer options = new DemoServer();
        new CommandLine(options)
                .parseArgs("--port", "0", "--metrics-port", "-1", "--threads", "1", "--max-frame-bytes", "65536");
        server = options.start();
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private double directMemoryUsed() {
        return server.registry.get("netty.allocator.memory.used").tag("memory.type", "direct").gauges().stream()
                .mapToDouble(Gauge::value)
                .sum();
    }

    @Test
    void theDirectMemoryGaugeMovesWhenTrafficFlows() throws IOException {
        assertEquals(0.0, directMemoryUsed(), "nothing read or written yet");
        byte[] payload = new byte[32 * 1024];
        Arrays.fill(payload, (byte) 7);
        try (RawClient client = new RawClient(server.address())) {
            for (int i = 0; i < 20; i++) {
                client.send(FrameType.DATA, payload);
                assertEquals(FrameType.DATA.code(), client.read().type());
            }
            double used = directMemoryUsed();
            assertTrue(used >= payload.length, "direct memory used after 20 echoes of 32 KiB: " + used + " bytes");
        }
    }
}
