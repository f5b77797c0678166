import { Injectable } from '@nestjs/common';

/** The adapter in front of the wall clock. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
