package io.wheelbeat.integration.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.wheelbeat.ratelimit.redis.RedisLeaseStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import redis.embedded.RedisServer;

/**
 * The health indicator of a Redis-shared limiter in a real Boot application, against a real
 * {@code redis-server} (embedded-redis's binary) through the Lettuce version Boot's dependency
 * management picks (6.6 on Boot 3.5, 6.8 on Boot 4.0): {@code UP} while Redis answers,
 * {@code DEGRADED} while it is down and the limiter decides by its failure policy, {@code UP}
 * again once Redis is back. Read over HTTP from Actuator's health endpoint. The waits for a change
 * are generous and never the verdict.
 */
@SpringBootTest(
        classes = {StarterApplication.class, RateLimitStoreHealthTest.SharedStoreConfiguration.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.reactor.netty.shutdown-quiet-period=0s",
            "management.endpoints.web.exposure.include=health",
            "management.endpoint.health.show-details=always"
        })
class RateLimitStoreHealthTest {

    private static final Duration CHANGE_WAIT = Duration.ofSeconds(60);

    @Value("${local.server.port}")
    int port;

    @Autowired
    LocalRedis redis;

    @Test
    void upWhileRedisAnswersDegradedWhileItIsDownUpOnceItIsBack() throws Exception {
        String lettuce = RedisClient.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toString();
        assertTrue(lettuce.contains("/lettuce-core-" + System.getProperty("wheelbeat.it.lettuce-line")), lettuce);
        assertEquals(
                Map.of("sharedStore", "deciding from the store"),
                awaitStatus("UP").get("details"));

        redis.stop();
        Map<String, Object> degraded = awaitStatus("DEGRADED");
        assertEquals(
                Map.of("sharedStore", "deciding by the failure policy: " + failureOf(degraded)),
                degraded.get("details"));

        redis.start();
        assertEquals(
                Map.of("sharedStore", "deciding from the store"),
                awaitStatus("UP").get("details"));
    }

    private static String failureOf(Map<String, Object> health) {
        @SuppressWarnings("unchecked")
        String detail = ((Map<String, String>) health.get("details")).get("sharedStore");
        return detail.substring(detail.lastIndexOf(' ') + 1);
    }

    /** The indicator's answer once it reports {@code status}; fails if it does not within the wait. */
    private Map<String, Object> awaitStatus(String status) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/actuator/health/wheelbeatRateLimitStore"))
                .build();
        Map<String, Object> health = Map.of();
        for (long deadline = System.nanoTime() + CHANGE_WAIT.toNanos(); System.nanoTime() - deadline < 0; ) {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            health = JsonParserFactory.getJsonParser().parseMap(response.body());
            if (status.equals(health.get("status"))) {
                return health;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not " + status + " within " + CHANGE_WAIT + ": " + health);
    }

    /** The store the application's limiters would share through, as a user declares it. */
    @TestConfiguration(proxyBeanMethods = false)
    static class SharedStoreConfiguration {

        @Bean(destroyMethod = "stop")
        LocalRedis redis() {
            return new LocalRedis();
        }

        @Bean(destroyMethod = "close")
        RedisLeaseStore sharedStore(LocalRedis redis) {
            return RedisLeaseStore.builder("redis://127.0.0.1:" + redis.port)
                    .timeout(Duration.ofMillis(500))
                    .build();
        }
    }

    /**
     * A {@code redis-server} on a loopback port, stopped and started again on the same port; it
     * stops with the context (the context is cached until the tests end).
     */
    static final class LocalRedis {
        final int port;
        private RedisServer server;

        LocalRedis() {
            try (ServerSocket free = new ServerSocket(0)) {
                port = free.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            start();
        }

        synchronized void start() {
            try {
                server = RedisServer.newRedisServer()
                        .port(port)
                        .bind("127.0.0.1")
                        .setting("save \"\"")
                        .setting("appendonly no")
                        .build();
                server.start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start redis-server on port " + port, e);
            }
        }

        synchronized void stop() throws IOException {
            if (server.isActive()) {
                server.stop();
            }
        }
    }
}
