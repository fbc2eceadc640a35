/**
 * The log backend of the agent and the controller: logback configured from {@code --log-level} and
 * {@code --log-format}, with context fields ({@code node=}, {@code group=}, {@code replica=}) on every line.
 */
package dev.fencing.logging;
