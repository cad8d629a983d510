/*
 * helper-errno.c: runs one system call and prints "OK" or the errno name
 * (ENOENT, EXDEV, ...) and exits 0, so shell tests can assert exact
 * errors in && chains; exit 2 on a usage error.
 *
 *   helper-errno mkdir|rmdir|unlink|stat PATH
 *   helper-errno write PATH DATA         open O_WRONLY|O_CREAT|O_TRUNC,
 *                                         write, close (close's error too)
 *   helper-errno rename FROM TO
 *   helper-errno rename-noreplace|rename-exchange FROM TO
 *                                         renameat2 with that flag
 *   helper-errno read PATH               open O_RDONLY, read to EOF, close
 *   helper-errno mmap PATH shared|private  open O_RDWR, mmap the file's
 *                                         size with PROT_READ|PROT_WRITE,
 *                                         print its bytes then a newline
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int run(int argc, char **argv)
{
	struct stat st;
	int fd;
	size_t len;

	if (argc == 3 && !strcmp(argv[1], "mkdir"))
		return mkdir(argv[2], 0755);
	if (argc == 3 && !strcmp(argv[1], "rmdir"))
		return rmdir(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "unlink"))
		return unlink(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "stat"))
		return stat(argv[2], &st);
	if (argc == 3 && !strcmp(argv[1], "read")) {
		char buf[65536];
		ssize_t got;
		fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return -1;
		while ((got = read(fd, buf, sizeof buf)) > 0)
			;
		if (got < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		return close(fd);
	}
	if (argc == 4 && !strcmp(argv[1], "mmap")) {
		int shared = !strcmp(argv[3], "shared"), e;
		void *p;
		if (!shared && strcmp(argv[3], "private"))
			goto usage;
		fd = open(argv[2], O_RDWR);
		if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
			e = fd < 0 || st.st_size ? errno : EINVAL;
			if (fd >= 0)
				close(fd);
			errno = e;
			return -1;
		}
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			 shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		fwrite(p, 1, (size_t)st.st_size, stdout);
		putchar('\n');
		munmap(p, (size_t)st.st_size);
		return close(fd);
	}
	if (argc == 4 && !strcmp(argv[1], "rename"))
		return rename(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "rename-noreplace"))
		return renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3],
				 RENAME_NOREPLACE);
	if (argc == 4 && !strcmp(argv[1], "rename-exchange"))
		return renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3],
				 RENAME_EXCHANGE);
	if (argc == 4 && !strcmp(argv[1], "write")) {
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return -1;
		len = strlen(argv[3]);
		if (write(fd, argv[3], len) != (ssize_t)len) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		return close(fd);
	}
usage:
	fprintf(stderr, "usage: helper-errno OP PATH [ARG]\n");
	errno = EINVAL;
	return -2;
}

int main(int argc, char **argv)
{
	int rc = run(argc, argv);

	if (rc == -2)
		return 2;
	if (rc == 0) {
		printf("OK\n");
		return 0;
	}
	printf("%s\n", strerrorname_np(errno));
	return 0;	/* the answer is what it printed */
}
