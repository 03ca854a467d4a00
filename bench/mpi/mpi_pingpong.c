/*
 * mpi_pingpong.c - PVM's timing protocol (bench/pvm_timing.c) over MPI, for
 * bench/pvm_timing.sh's one-host comparison with Open MPI's shared memory:
 * rank 0 sends N bytes (4 B, 100 B, ... 1 MB) and rank 1 answers 4 bytes;
 * each round trip is timed, medians are printed as pvm_timing --json does.
 * Built with mpicc by bench/mpi/build.mk when mpicc is present (it lives in
 * a folder of its own, so the main build never compiles it without MPI).
 *
 *   mpirun --allow-run-as-root --oversubscribe -np 2 mpi_pingpong [-r REPS]
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = { 4, 100, 1000, 10000, 100000, 1000000 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
    int rank, reps = 200, warmup = 3, reply = 0;
    char *buf;
    double *rt, med[NSIZES];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
    buf = malloc((size_t)sizes[NSIZES - 1]);
    rt = malloc((size_t)reps * sizeof(*rt));
    if (buf == NULL || rt == NULL || reps < 1)
        MPI_Abort(MPI_COMM_WORLD, 1);
    /* Data, as a program sends: an untouched calloc'ed buffer is all the
     * one zero page, which stays in the cache however much is copied (a
     * 1 MB round trip measured 37 us so, 58 us with data). */
    for (int i = 0; i < sizes[NSIZES - 1]; i++)
        buf[i] = (char)(i * 7 + rank);
    for (int s = 0; s < NSIZES; s++) {
        for (int i = -warmup; i < reps; i++) {
            if (rank == 0) {
                double t0 = MPI_Wtime();
                MPI_Send(buf, sizes[s], MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(&reply, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (i >= 0)
                    rt[i] = (MPI_Wtime() - t0) * 1e6;
            } else {
                MPI_Recv(buf, sizes[s], MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&reply, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
            }
        }
        qsort(rt, (size_t)reps, sizeof(*rt), cmp_double);
        med[s] = reps % 2 ? rt[reps / 2] : (rt[reps / 2 - 1] + rt[reps / 2]) / 2;
    }
    if (rank == 0) {
        printf("{\"impl\":\"Open MPI\",\"route\":\"shm\",\"reps\":%d,\"results\":[", reps);
        for (int s = 0; s < NSIZES; s++)
            printf("%s{\"bytes\":%d,\"median_us\":%.2f}", s ? "," : "", sizes[s], med[s]);
        printf("]}\n");
    }
    free(buf);
    free(rt);
    MPI_Finalize();
    return 0;
}
