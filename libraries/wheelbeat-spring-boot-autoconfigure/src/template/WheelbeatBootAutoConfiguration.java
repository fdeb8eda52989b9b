package io.wheelbeat.spring.boot${wheelbeat.boot};

import io.wheelbeat.ratelimit.redis.RedisLeaseStore;
import io.wheelbeat.spring.boot.autoconfigure.LeaseStoreState;
import io.wheelbeat.spring.boot.autoconfigure.ReactorNettyHandlers;
import io.wheelbeat.spring.boot.autoconfigure.WheelbeatAutoConfiguration;
import java.util.Map;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.http.client.reactive.ReactorClientHttpConnectorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import ${wheelbeat.boot.health}.AbstractHealthIndicator;
import ${wheelbeat.boot.health}.Health;
import ${wheelbeat.boot.health}.Status;
import ${wheelbeat.boot.connector}.ClientHttpConnectorBuilderCustomizer;
import ${wheelbeat.boot.server}.NettyServerCustomizer;

/**
 * wheelbeat on Spring Boot ${wheelbeat.boot}: hands {@link ReactorNettyHandlers} to the Netty web server
 * ({@code ${wheelbeat.boot.server}.NettyServerCustomizer}) and to WebClient's Reactor Netty
 * connector, and reports the Redis-shared limiters' health. Skipped on the other Boot line, whose
 * types live in other packages.
 */
// One source for both Boot lines (wheelbeat-spring-boot-autoconfigure/src/template), copied into the Boot 3
// and Boot 4 modules with their Boot packages, the only difference, by the parent pom's boot-source execution.
@AutoConfiguration(after = WheelbeatAutoConfiguration.class)
@ConditionalOnClass(name = "${wheelbeat.boot.server}.NettyServerCustomizer")
@ConditionalOnBean(ReactorNettyHandlers.class)
public class WheelbeatBoot${wheelbeat.boot}AutoConfiguration {

    @Bean
    NettyServerCustomizer wheelbeatNettyServerCustomizer(ReactorNettyHandlers handlers) {
        return handlers::customize;
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "${wheelbeat.boot.connector}.ClientHttpConnectorBuilderCustomizer",
                "org.springframework.web.reactive.function.client.WebClient"
            })
    static class WebClientConfiguration {

        @Bean
        ClientHttpConnectorBuilderCustomizer<ReactorClientHttpConnectorBuilder>
                wheelbeatClientHttpConnectorBuilderCustomizer(ReactorNettyHandlers handlers) {
            return builder -> builder.withHttpClientCustomizer(handlers.clientCustomizer());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "${wheelbeat.boot.health}.HealthIndicator",
                "io.wheelbeat.ratelimit.redis.RedisLeaseStore"
            })
    @ConditionalOnBean(type = "io.wheelbeat.ratelimit.redis.RedisLeaseStore")
    static class HealthConfiguration {

        @Bean
        AbstractHealthIndicator wheelbeatRateLimitStoreHealthIndicator(Map<String, RedisLeaseStore> stores) {
            return new AbstractHealthIndicator("wheelbeat rate-limit store health check failed") {
                @Override
                protected void doHealthCheck(Health.Builder builder) {
                    Map<String, LeaseStoreState> states = LeaseStoreState.probeAll(stores);
                    states.forEach((name, state) -> builder.withDetail(name, state.description()));
                    builder.status(
                            LeaseStoreState.anyDecidesByFailurePolicy(states)
                                    ? new Status(LeaseStoreState.DEGRADED)
                                    : Status.UP);
                }
            };
        }
    }
}
