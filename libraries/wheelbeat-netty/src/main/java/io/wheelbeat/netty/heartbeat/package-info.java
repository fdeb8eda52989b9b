/**
 * Application-level heartbeats for your own protocol: use
 * {@link io.wheelbeat.netty.heartbeat.HeartbeatHandler} when your messages include a ping and a
 * pong (with or without an id). It pings on an interval, closes a peer that misses too many pongs
 * ({@link io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent}), reports round trips
 * ({@link io.wheelbeat.netty.heartbeat.PongReceivedEvent}) and can enforce a minimum interval on
 * the peer's pings ({@link io.wheelbeat.netty.heartbeat.TooManyPingsEvent}). For WebSocket, MQTT
 * and HTTP/2 use their own packages.
 */
package io.wheelbeat.netty.heartbeat;
