/* bb-seek's references in scripts/bench-seek.sh: a pattern's reads (offset,length lines,
 * as --pattern-file takes them) of a hot file, made SHOTS times, in C.
 *   mmap:  per pass the file is mapped, each read memcpy'd out of the mapping, and unmapped
 *          (the page faults and the page tables are in the time, as a fresh stream's are);
 *   pread: each read one pread, as the plain client makes it.
 * Reads land in a ring of RING bytes, reused in a circle and split where it wraps, as
 * bb-seek's do (pass its ring: 64 KiB for reads of up to 64 KiB, else 16 MiB, at most the
 * bytes a pass asks). Between passes, untimed, the ring is read whole, as bb-seek's check
 * of a shot reads it: each pass starts with the caches as a shot finds them.
 * Prints the mean ms of the SHOTS passes after 2 warm-up passes.
 * Usage: seek-ref mmap|pread FILE PATTERN_FILE RING SHOTS */
#define _FILE_OFFSET_BITS 64
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: seek-ref mmap|pread FILE PATTERN_FILE RING SHOTS\n");
        return 2;
    }
    int use_mmap = strcmp(argv[1], "mmap") == 0;
    int fd = open(argv[2], O_RDONLY);
    FILE *pattern = fopen(argv[3], "r");
    size_t ring = strtoull(argv[4], 0, 10);
    int shots = atoi(argv[5]);
    struct stat st;
    if (fd < 0 || !pattern || ring == 0 || shots < 1 || fstat(fd, &st) != 0) {
        perror("seek-ref");
        return 1;
    }
    size_t count = 0, room = 1024;
    unsigned long long (*reads)[2] = malloc(room * sizeof *reads);
    while (fscanf(pattern, "%llu,%llu", &reads[count][0], &reads[count][1]) == 2)
        if (++count == room)
            reads = realloc(reads, (room *= 2) * sizeof *reads);
    char *buf = malloc(ring);
    memset(buf, 0, ring);
    double total = 0;
    unsigned sum = 0;
    for (int pass = 0; pass < shots + 2; pass++) {
        for (size_t i = 0; i < ring; i++)
            sum += (unsigned char)buf[i];
        double start = ms();
        char *map = use_mmap ? mmap(0, st.st_size, PROT_READ, MAP_SHARED, fd, 0) : 0;
        if (map == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        size_t at = 0;
        for (size_t i = 0; i < count; i++) {
            unsigned long long offset = reads[i][0], left = reads[i][1];
            while (left > 0) {
                size_t n = ring - at < left ? ring - at : left;
                if (use_mmap)
                    memcpy(buf + at, map + offset, n);
                else if (pread(fd, buf + at, n, offset) != (ssize_t)n) {
                    perror("pread");
                    return 1;
                }
                offset += n, left -= n, at = (at + n) % ring;
            }
        }
        if (use_mmap)
            munmap(map, st.st_size);
        if (pass >= 2)
            total += ms() - start;
        sum += (unsigned char)buf[at]; /* the copies are used */
    }
    printf("%.4f\n", total / shots);
    return sum == 0xffffffff;
}
