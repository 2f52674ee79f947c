import CGlibcMalloc

/// Hands the memory glibc's allocator holds free, in every arena, back to the kernel
/// (`malloc_trim(0)`). glibc keeps what a program frees for its next allocations and returns
/// only the top of a heap on its own: after a burst (clients that stopped reading, their queues
/// dropped when they were closed) the process would stay at its high-water mark for good.
///
/// Threads: any; it takes each arena's lock in turn, so threads allocating meanwhile wait for
/// it. Costs a walk over the free memory and a system call per free run of pages: call it after
/// much was freed, not routinely. Returns whether any memory went back.
@discardableResult
public func returnFreeMemoryToTheSystem() -> Bool {
    malloc_trim(0) == 1
}
