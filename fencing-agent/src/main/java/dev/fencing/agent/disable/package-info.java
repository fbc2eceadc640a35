/**
 * The disable file ({@code /var/run/fencing-agent/disable}): while anything exists at that path the agent disarms
 * and stays disarmed; its first line is shown as the reason and never interpreted. Changes are noticed within one
 * second in both directions.
 */
package dev.fencing.agent.disable;
