/**
 * The shared-disk arbiter: SBD's on-disk layout (header, one node slot and one mailbox per node, as the ClusterLabs
 * {@code sbd} tool writes them), this agent's own view written into its node slot, the poison pill, cut-off
 * detection and the {@code Disk} tie-breaker. The codec ({@link SbdHeader}, {@link SbdSlot}, {@link SbdMailbox},
 * {@link SlotView}) is pure; {@link DiskArbiter} is the protocol on an injected clock; only {@link DiskMonitor}'s
 * thread does I/O, through a {@link BlockDevice}.
 */
package dev.fencing.agent.disk;
