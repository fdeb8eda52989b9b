/**
 * Application-level heartbeats for your own protocol ({@link io.wheelbeat.netty.heartbeat.HeartbeatHandler})
 * and the events and ping limits every keepalive shares.
 */
package io.wheelbeat.netty.heartbeat;
