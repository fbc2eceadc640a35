# Shared by the fakes: next_in_sequence NAME ARGS... records "ARGS" in $FAKE_DIR/NAME.calls and prints the next
# line of $FAKE_DIR/NAME.seq; once the lines are used up the last one repeats.
next_in_sequence() {
  local name="$1" calls count total
  shift
  : "${FAKE_DIR:?FAKE_DIR must be set by the test}"
  echo "$*" >>"$FAKE_DIR/$name.calls"
  calls="$(wc -l <"$FAKE_DIR/$name.calls")"
  total="$(grep -c '' "$FAKE_DIR/$name.seq")"
  count=$((calls < total ? calls : total))
  sed -n "${count}p" "$FAKE_DIR/$name.seq"
}
