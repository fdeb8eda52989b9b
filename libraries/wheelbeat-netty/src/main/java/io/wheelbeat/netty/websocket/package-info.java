/**
 * WebSocket keepalive over Netty's WebSocket codec ({@code netty-codec-http}, which it needs):
 * {@link io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler}.
 */
package io.wheelbeat.netty.websocket;
