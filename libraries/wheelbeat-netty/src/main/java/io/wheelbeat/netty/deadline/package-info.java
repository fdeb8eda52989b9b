/**
 * Deadlines independent of traffic: a first-message timeout and a maximum connection age
 * ({@link io.wheelbeat.netty.deadline.ConnectionDeadlineHandler}).
 */
package io.wheelbeat.netty.deadline;
